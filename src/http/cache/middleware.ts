import type { Context, MiddlewareHandler, Next } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../../app-env.ts'
import type { RangeName } from '../../query/time-range.ts'
import { SingleFlight } from '../../single-flight.ts'
import { acceptsCoding } from '../content-coding.ts'
import { gzipOnce } from '../compression.ts'
import { cacheKeys, matchesEtag } from './key.ts'
import { LruCache, type Entry } from './lru.ts'
import { throttledWatermark } from './watermark.ts'

/**
 * Response cache, single-flight coalescing and ETag revalidation for the aggregate routes
 * (`/insights/*`, `/export/charts`). What makes two requests the same is in key.ts, what makes
 * the data the same in watermark.ts.
 *
 * Only 200s are kept; errors are never cached. Memory is bounded by `maxBytes` (bodies and
 * headers) and `maxEntries`, least recently used first out.
 *
 * Identical requests that arrive while the first is still running wait for its answer instead of
 * running the same query again (`X-Quarry-Cache: coalesced`); if the first one fails, each waiter
 * runs its own. Authentication, project access and rate limits run before this middleware, so a
 * cached body is only ever served to a caller allowed to read that project.
 *
 * `X-Quarry-Cache` says what happened: `hit`, `miss`, `coalesced`, or `bypass` (not cacheable:
 * `/live`, explain=sql, a parameter error, the watermark unavailable, an answer behind the newest
 * inserts). With `If-None-Match` matching the request's ETag the answer is 304 without running
 * anything.
 *
 * The app uses it only when given one (`buildApp({ responseCache })`): a test that changes the
 * engine between two identical requests, or counts the queries they run, expects no cache.
 */
export interface ResponseCacheOptions {
  /** Keep bodies; false leaves only ETag/304 (and no coalescing). */
  store: boolean
  /** Send ETag and answer If-None-Match with 304. */
  etag: boolean
  maxBytes: number
  maxEntries: number
  nowTtlMs: number
  closedTtlMs: number
  watermarkTtlMs: number
}

export const DEFAULT_RESPONSE_CACHE: ResponseCacheOptions = {
  store: true,
  etag: true,
  maxBytes: 64 * 1024 * 1024,
  maxEntries: 10_000,
  nowTtlMs: 5_000,
  closedTtlMs: 300_000,
  watermarkTtlMs: 1_000,
}

export interface ResponseCache {
  /** Middleware for one route family; `defaultRange` is the range its handler assumes. */
  middleware(defaultRange: RangeName): MiddlewareHandler<AppEnv>
  readonly lru: LruCache
  clear(): void
}

/**
 * Headers that belong to one exchange (or that outer middleware sets again), never replayed. A
 * route's own Content-Encoding (a streamed export's) is kept: the key holds the coding it negotiated.
 */
const PER_REQUEST = /^(x-request-id|server-timing|x-quarry-stats|x-quarry-cache|etag|content-length|vary|set-cookie|retry-after|ratelimit-.*|x-ratelimit-.*|access-control-.*)$/i

/**
 * Set by a route whose answer is exact for the data a moment before the watermark it was asked
 * under: it is neither kept nor tagged, since the watermark's key and ETag would vouch for data it
 * lacks until the next insert, past the lag the route allowed.
 */
export const LIVE_AS_OF = 'X-Quarry-Live-As-Of'

/** Bytes of bookkeeping counted per entry besides its body and headers. */
const ENTRY_OVERHEAD = 256

export function createResponseCache(
  deps: { now: () => Date; watermark: () => Promise<string> },
  options: Partial<ResponseCacheOptions> = {},
): ResponseCache {
  const opts = { ...DEFAULT_RESPONSE_CACHE, ...options }
  const lru = new LruCache(opts.maxBytes, opts.maxEntries)
  const flights = new SingleFlight<Entry | undefined>()
  const watermark = throttledWatermark(deps.watermark, opts.watermarkTtlMs)
  const keyOf = cacheKeys({ now: deps.now, nowTtlMs: opts.nowTtlMs, closedTtlMs: opts.closedTtlMs })

  const replay = (c: Context<AppEnv>, entry: Entry, how: 'hit' | 'coalesced', etag: string | undefined, started: number) => {
    const headers: Record<string, string> = Object.fromEntries(entry.headers)
    headers['X-Quarry-Cache'] = how
    if (etag) headers.ETag = etag
    headers['Server-Timing'] = `cache;desc=${how}, total;dur=${(performance.now() - started).toFixed(1)}`
    if (entry.gzip && acceptsCoding(c.req.header('accept-encoding'), 'gzip')) {
      // With its length, which compression reads as already done.
      headers['Content-Encoding'] = 'gzip'
      headers['Content-Length'] = String(entry.gzip.byteLength)
      headers.Vary = 'Accept-Encoding'
      return c.body(entry.gzip, entry.status as 200, headers)
    }
    return c.body(entry.body, entry.status as 200, headers)
  }

  /** Runs the route; a 200 gets its ETag and, when bodies are kept, is kept. */
  const run = async (c: Context<AppEnv>, next: Next, key: string, ttlMs: number, etag: string | undefined) => {
    await next()
    if (c.res.status !== 200 || c.error) return undefined
    if (c.res.headers.has(LIVE_AS_OF)) return void c.res.headers.set('X-Quarry-Cache', 'bypass')
    if (etag) c.res.headers.set('ETag', etag)
    c.res.headers.set('X-Quarry-Cache', opts.store ? 'miss' : 'bypass')
    if (!opts.store) return undefined
    const res = c.res
    const body = new Uint8Array(await res.arrayBuffer())
    const headers = [...res.headers].filter(([name]) => !PER_REQUEST.test(name))
    c.res = undefined
    c.res = new Response(body, { status: res.status, headers: res.headers })
    const gzip = res.headers.has('Content-Encoding') ? undefined : gzipOnce(res.headers.get('Content-Type'), body)
    const bytes = body.byteLength + (gzip?.byteLength ?? 0) + headers.reduce((n, [k, v]) => n + k.length + v.length, 0) + key.length + ENTRY_OVERHEAD
    const entry: Entry = { key, status: res.status, headers, body, gzip, bytes, expires: Date.now() + ttlMs }
    lru.set(entry)
    return entry
  }

  const middleware = (defaultRange: RangeName) =>
    createMiddleware<AppEnv>(async (c, next) => {
      // explainable() has parsed explain=sql already and given the request a runner that only records.
      if (c.req.method !== 'GET' || c.get('runner')?.dryRun) {
        c.header('X-Quarry-Cache', 'bypass')
        return next()
      }
      const started = performance.now()
      const described = keyOf(c, defaultRange)
      // Admission judged the queue too long (http/admission.ts): only a request the cache may answer
      // waits for the watermark; one with nothing kept or in flight under the last watermark read is
      // refused now, not after the read, which waits for a slot of the gate it would be refused.
      const refusal = c.get('refusal')
      if (refusal && described) {
        const last = watermark.known()
        const key = last === undefined ? undefined : described.at(last).key
        if (key === undefined || (!lru.get(key, Date.now()) && !flights.has(key))) throw refusal()
      }
      let version: string | undefined
      if (described) version = await watermark.get().catch(() => undefined)
      if (!described || version === undefined) {
        c.header('X-Quarry-Cache', 'bypass')
        return next()
      }
      const { key, etag: tag } = described.at(version)
      const etag = opts.etag ? tag : undefined
      if (etag && matchesEtag(c.req.header('if-none-match'), etag)) {
        c.header('ETag', etag)
        c.header('X-Quarry-Cache', 'hit')
        return c.body(null, 304)
      }
      const own = () => run(c, next, key, described.ttlMs, etag)
      if (!opts.store) return void (await own())
      const cached = lru.get(key, Date.now())
      if (cached) return replay(c, cached, 'hit', etag, started)
      let leads = false
      const flight = flights.run(key, () => {
        leads = true
        return own()
      })
      if (leads) return void (await flight)
      const shared = await flight.catch(() => undefined)
      if (shared) return replay(c, shared, 'coalesced', etag, started)
      await own()
    })

  return {
    middleware,
    lru,
    clear() {
      lru.clear()
      watermark.forget()
    },
  }
}
