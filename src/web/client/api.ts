/**
 * Calls to Quarry's public API with the signed-in client's headers. Credentials live in
 * sessionStorage and travel only in headers, never in a URL.
 */
export interface Credentials {
  id: string
  secret: string
}

/** What a call cost: Server-Timing and X-Quarry-Stats as the server sent them, and the wall time seen here. */
export interface Cost {
  serverTiming: string | null
  stats: string | null
  ms: number
}

export type Answer<T> =
  | { ok: true; body: T; headers: Headers; cost: Cost }
  | { ok: false; status: number; code: string; message: string; retryAfter: number | null; cost: Cost }

const KEY = 'quarry.credentials'

export function storedCredentials(): Credentials | null {
  try {
    const parsed = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Credentials | null
    return parsed && typeof parsed.id === 'string' && typeof parsed.secret === 'string' ? parsed : null
  } catch {
    return null
  }
}

export function storeCredentials(c: Credentials | null): void {
  if (c) sessionStorage.setItem(KEY, JSON.stringify(c))
  else sessionStorage.removeItem(KEY)
}

/** `#client=<id>:<secret>`: read once, then removed from the address bar (a fragment never reaches the server). */
export function credentialsFromFragment(hash: string): Credentials | null {
  const match = /^#client=([^:]+):(.+)$/.exec(hash)
  if (!match) return null
  return { id: decodeURIComponent(match[1]!), secret: decodeURIComponent(match[2]!) }
}

const headersOf = (c: Credentials) => ({ 'openpanel-client-id': c.id, 'openpanel-client-secret': c.secret })

async function call(path: string, credentials: Credentials, signal?: AbortSignal) {
  const started = performance.now()
  const res = await fetch(path, { headers: headersOf(credentials), signal, cache: 'no-store' })
  const cost = (): Cost => ({
    serverTiming: res.headers.get('Server-Timing'),
    stats: res.headers.get('X-Quarry-Stats'),
    ms: performance.now() - started,
  })
  return { res, cost }
}

async function failure(res: Response, cost: Cost) {
  let code = 'http_error'
  let message = res.statusText
  try {
    const body = (await res.json()) as { code?: string; message?: string }
    code = body.code ?? code
    message = body.message ?? message
  } catch {
    // not the JSON envelope (a proxy's page): the status says enough
  }
  const retry = Number(res.headers.get('Retry-After'))
  return { ok: false as const, status: res.status, code, message, retryAfter: Number.isFinite(retry) && retry > 0 ? retry : null, cost }
}

const unreachable = (err: unknown, started: number) => ({
  ok: false as const,
  status: 0,
  code: 'unreachable',
  message: err instanceof Error ? err.message : String(err),
  retryAfter: null,
  cost: { serverTiming: null, stats: null, ms: performance.now() - started },
})

/**
 * At most this many API calls in flight from the page: the engine answers them one after another
 * anyway, and a server at capacity refuses (503) the requests that would wait behind a long queue,
 * so a page that sent all of its widgets' requests at once would be refused its own last ones.
 */
const MAX_IN_FLIGHT = 3
let inFlight = 0
const waiting: (() => void)[] = []

async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  if (inFlight < MAX_IN_FLIGHT) inFlight++
  else await new Promise<void>((resolve) => waiting.push(resolve))
  try {
    return await work()
  } finally {
    // The slot passes straight to the next caller in line, so a newcomer cannot jump the queue.
    const next = waiting.shift()
    if (next) next()
    else inFlight--
  }
}

export async function getJson<T>(path: string, credentials: Credentials, signal?: AbortSignal): Promise<Answer<T>> {
  const started = performance.now()
  try {
    const { res, cost } = await inTurn(() => call(path, credentials, signal))
    if (!res.ok) return failure(res, cost())
    const body = (await res.json()) as T
    return { ok: true, body, headers: res.headers, cost: cost() }
  } catch (err) {
    if (signal?.aborted) throw err
    return unreachable(err, started)
  }
}

export async function getBlob(path: string, credentials: Credentials): Promise<Answer<Blob>> {
  const started = performance.now()
  try {
    const { res, cost } = await call(path, credentials)
    if (!res.ok) return failure(res, cost())
    const body = await res.blob()
    return { ok: true, body, headers: res.headers, cost: cost() }
  } catch (err) {
    return unreachable(err, started)
  }
}

/** A failed answer in words, for the widget that got it. */
export function describeFailure(a: Extract<Answer<unknown>, { ok: false }>): string {
  const retry = a.retryAfter ? ` Retrying in ${a.retryAfter} s.` : ''
  switch (a.status) {
    case 0:
      return `Quarry did not answer (${a.message}).`
    case 401:
      return 'Not signed in: the server refused this client id or secret (401). Sign in again.'
    case 403:
      return `This client may not read this (403 ${a.code}): ${a.message}.`
    case 404:
      return `Not found (404 ${a.code}): ${a.message}.`
    case 429:
      return `Too many requests (429): the rate limit was reached.${retry}`
    case 503:
      return `Quarry is unavailable for now (503 ${a.code}): ${a.message}.${retry}`
    case 504:
      return `The query took too long (504): ${a.message}.`
    default:
      return `The request failed (${a.status} ${a.code}): ${a.message}.`
  }
}

export function describeCost(cost: Cost): string {
  const parts = [`${cost.ms.toFixed(0)} ms in the browser`]
  if (cost.serverTiming) parts.push(`Server-Timing: ${cost.serverTiming}`)
  if (cost.stats) parts.push(cost.stats)
  return parts.join('\n')
}
