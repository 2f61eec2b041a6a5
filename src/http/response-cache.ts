import { createHash } from 'node:crypto'
import type { Context, MiddlewareHandler } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../app-env.ts'
import type { QueryRunner } from '../clickhouse/run.ts'
import { resolveRange, type RangeName } from '../query/time-range.ts'

/**
 * Response cache, single-flight coalescing and ETag revalidation for the aggregate routes
 * (`/insights/*`, `/export/charts`).
 *
 * The key is what defines the body: route path, project (and its timezone), the request's query
 * string normalized (parameters sorted), the window it resolves to now (so `range=30d` means
 * another key tomorrow), the origin (the `Link` header repeats it) and a data watermark. The
 * watermark is `count()` of `events` — answered from part metadata, so it costs one small query
 * however large the table — read at most once per `watermarkTtlMs`: an insert anywhere changes it,
 * which retires every cached body and every ETag handed out. Ingestion only inserts (principle 2),
 * so a changed count is what "the data changed" means; an `ALTER UPDATE` of events would not be
 * seen until the entries expire.
 *
 * Entries live `nowTtlMs` when the window reaches the present (the watermark is at most
 * `watermarkTtlMs` old, and `/live` moves with the clock) and `closedTtlMs` otherwise. Only 200s
 * are kept; errors are never cached. Memory is bounded by `maxBytes` (bodies and headers) and
 * `maxEntries`, least recently used first out.
 *
 * Identical requests that arrive while the first is still running wait for its answer instead of
 * running the same query again (`X-Quarry-Cache: coalesced`); if the first one fails, each waiter
 * runs its own. Authentication, project access and rate limits run before this middleware, so a
 * cached body is only ever served to a caller allowed to read that project.
 *
 * `X-Quarry-Cache` says what happened: `hit`, `miss`, `coalesced`, or `bypass` (not cacheable:
 * `/live`, explain=sql, a parameter error, the watermark unavailable). With `If-None-Match`
 * matching the request's ETag the answer is 304 without running anything.
 *
 * `/live` is never cached: its five minutes end at the request's millisecond, so no two requests
 * share an answer, and its query is one of the cheapest.
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

interface Entry {
  key: string
  status: number
  headers: [string, string][]
  body: Uint8Array<ArrayBuffer>
  bytes: number
  expires: number
}

/** Headers that belong to one exchange (or that outer middleware sets again), never replayed. */
const PER_REQUEST = /^(x-request-id|server-timing|x-quarry-stats|x-quarry-cache|etag|content-length|content-encoding|vary|set-cookie|retry-after|ratelimit-.*|x-ratelimit-.*|access-control-.*)$/i

/** Bytes of bookkeeping counted per entry besides its body and headers. */
const ENTRY_OVERHEAD = 256

/** A size- and count-bounded LRU of entries; a Map keeps insertion order, re-inserting marks use. */
export class LruCache {
  private readonly map = new Map<string, Entry>()
  private total = 0
  constructor(
    private readonly maxBytes: number,
    private readonly maxEntries: number,
  ) {}

  get(key: string, now: number): Entry | undefined {
    const entry = this.map.get(key)
    if (!entry) return undefined
    this.map.delete(key)
    if (entry.expires <= now) {
      this.total -= entry.bytes
      return undefined
    }
    this.map.set(key, entry)
    return entry
  }

  set(entry: Entry): void {
    if (entry.bytes > this.maxBytes) return
    const old = this.map.get(entry.key)
    if (old) {
      this.map.delete(entry.key)
      this.total -= old.bytes
    }
    this.map.set(entry.key, entry)
    this.total += entry.bytes
    for (const [key, oldest] of this.map) {
      if (this.total <= this.maxBytes && this.map.size <= this.maxEntries) break
      this.map.delete(key)
      this.total -= oldest.bytes
    }
  }

  clear(): void {
    this.map.clear()
    this.total = 0
  }

  get size() {
    return this.map.size
  }

  get bytes() {
    return this.total
  }
}

export interface ResponseCache {
  /** Middleware for one route family; `defaultRange` is the range its handler assumes. */
  middleware(defaultRange: RangeName): MiddlewareHandler<AppEnv>
  readonly lru: LruCache
  clear(): void
}

/** The data watermark: a cheap number that changes with every insert into events. */
export function eventsWatermark(runner: QueryRunner, timeoutS = 10): () => Promise<string> {
  return async () => {
    const [row] = await runner.rows<{ n: number | string }>(
      { name: 'cache_watermark', sql: 'SELECT count() AS n FROM events', params: {} },
      { timeoutS },
    )
    return String(row?.n ?? 0)
  }
}

export function createResponseCache(
  deps: { now: () => Date; watermark: () => Promise<string> },
  options: Partial<ResponseCacheOptions> = {},
): ResponseCache {
  const opts = { ...DEFAULT_RESPONSE_CACHE, ...options }
  const lru = new LruCache(opts.maxBytes, opts.maxEntries)
  const inflight = new Map<string, Promise<Entry | undefined>>()

  let mark: { value: string; at: number } | undefined
  let reading: Promise<string> | undefined
  /** The watermark, re-read at most once per watermarkTtlMs and by one caller at a time. */
  const watermark = (): Promise<string> => {
    const t = Date.now()
    if (mark && t - mark.at < opts.watermarkTtlMs) return Promise.resolve(mark.value)
    reading ??= deps
      .watermark()
      .then((value) => {
        mark = { value, at: Date.now() }
        return value
      })
      .finally(() => (reading = undefined))
    return reading
  }

  /**
   * resolveRange, remembered per minute: every named range is a function of the clock floored to
   * the minute (or coarser) in its timezone, so the memo is exact. On a hit, resolving the window
   * with Intl and luxon was most of the CPU; this keeps it to a Map lookup.
   */
  const windows = new Map<string, { start: number; end: number } | undefined>()
  const resolveWindow = (range: string | undefined, startDate: string | undefined, endDate: string | undefined, tz: string, now: Date, defaultRange: RangeName) => {
    const memo = JSON.stringify([range, startDate, endDate, tz, defaultRange, Math.floor(now.getTime() / 60_000)])
    if (windows.has(memo)) return windows.get(memo)
    let window: { start: number; end: number } | undefined
    try {
      const r = resolveRange({ range: range as RangeName | undefined, startDate, endDate }, tz, now, defaultRange)
      window = r.start.isValid && r.end.isValid ? { start: r.start.toMillis(), end: r.end.toMillis() } : undefined
    } catch {
      window = undefined
    }
    if (windows.size >= 4096) windows.clear()
    windows.set(memo, window)
    return window
  }

  const describe = (c: Context<AppEnv>, defaultRange: RangeName): { key: string; ttl: number } | undefined => {
    const url = new URL(c.req.url)
    const params = [...url.searchParams].sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    const project = c.get('project')
    const now = deps.now()
    if (url.pathname.endsWith('/live')) return undefined
    const q = Object.fromEntries(url.searchParams)
    const window = resolveWindow(q.range, q.startDate, q.endDate, q.timezone ?? project.timezone, now, defaultRange)
    if (!window) return undefined // the handler answers 400
    // A cursor pins the window of its first page, which may have reached the present.
    const touchesNow = url.searchParams.has('cursor') || window.end > now.getTime()
    const key = JSON.stringify([url.origin, url.pathname, project.id, project.timezone, params, [window.start, window.end]])
    return { key, ttl: touchesNow ? opts.nowTtlMs : opts.closedTtlMs }
  }

  const etagOf = (key: string) => `W/"${createHash('sha256').update(key).digest('base64url').slice(0, 27)}"`

  const matches = (header: string | undefined, etag: string) =>
    header !== undefined && header.split(',').some((t) => t.trim() === '*' || t.trim() === etag || `W/${t.trim()}` === etag)

  const replay = (c: Context<AppEnv>, entry: Entry, how: 'hit' | 'coalesced', etag: string | undefined, started: number) => {
    const headers: Record<string, string> = Object.fromEntries(entry.headers)
    headers['X-Quarry-Cache'] = how
    if (etag) headers.ETag = etag
    headers['Server-Timing'] = `cache;desc=${how}, total;dur=${(performance.now() - started).toFixed(1)}`
    return c.body(entry.body, entry.status as 200, headers)
  }

  const middleware = (defaultRange: RangeName) =>
    createMiddleware<AppEnv>(async (c, next) => {
      if (c.req.method !== 'GET' || c.req.queries('explain') !== undefined) {
        c.header('X-Quarry-Cache', 'bypass')
        return next()
      }
      const started = performance.now()
      const described = describe(c, defaultRange)
      let version: string | undefined
      if (described) version = await watermark().catch(() => undefined)
      if (!described || version === undefined) {
        c.header('X-Quarry-Cache', 'bypass')
        return next()
      }
      const key = `${described.key}#${version}`
      const etag = opts.etag ? etagOf(key) : undefined
      if (etag && matches(c.req.header('if-none-match'), etag)) {
        c.header('ETag', etag)
        c.header('X-Quarry-Cache', 'hit')
        return c.body(null, 304)
      }
      if (opts.store) {
        const cached = lru.get(key, Date.now())
        if (cached) return replay(c, cached, 'hit', etag, started)
        const pending = inflight.get(key)
        if (pending) {
          const shared = await pending
          if (shared) return replay(c, shared, 'coalesced', etag, started)
        }
      }

      let settle: (entry: Entry | undefined) => void = () => {}
      const leader = opts.store && !inflight.has(key)
      if (leader) inflight.set(key, new Promise((resolve) => (settle = resolve)))
      let entry: Entry | undefined
      try {
        await next()
        if (c.res.status === 200 && !c.error) {
          if (etag) c.res.headers.set('ETag', etag)
          c.res.headers.set('X-Quarry-Cache', opts.store ? 'miss' : 'bypass')
          if (opts.store) {
            const res = c.res
            const body = new Uint8Array(await res.arrayBuffer())
            const headers = [...res.headers].filter(([name]) => !PER_REQUEST.test(name))
            c.res = undefined
            c.res = new Response(body, { status: res.status, headers: res.headers })
            const bytes = body.byteLength + headers.reduce((n, [k, v]) => n + k.length + v.length, 0) + key.length + ENTRY_OVERHEAD
            entry = { key, status: res.status, headers, body, bytes, expires: Date.now() + described.ttl }
            lru.set(entry)
          }
        }
      } finally {
        if (leader) {
          inflight.delete(key)
          settle(entry)
        }
      }
    })

  return {
    middleware,
    lru,
    clear() {
      lru.clear()
      mark = undefined
    },
  }
}
