import { hash } from 'node:crypto'
import type { Context } from 'hono'
import { LRUCache } from 'lru-cache'
import type { AppEnv } from '../../app-env.ts'
import { negotiateCoding } from '../content-coding.ts'
import { resolveRange, type RangeName } from '../../query/time-range.ts'

interface Window {
  start: number
  end: number
}

/** A cacheable request: the key of its body (before the data watermark) and how long it may be kept. */
export interface CacheKey {
  key: string
  ttlMs: number
  /** The key with the data watermark, and its ETag. */
  at(version: string): { key: string; etag: string }
}

export interface KeyOptions {
  now: () => Date
  nowTtlMs: number
  closedTtlMs: number
}

/** Bounds the memo: dates and timezones are the caller's to invent. */
const WINDOW_MEMOS = 4096

/**
 * resolveRange, remembered per minute: every named range is a function of the clock floored to
 * the minute (or coarser) in its timezone, so the memo is exact. On a hit, resolving the window
 * with Intl and luxon was most of the CPU; this keeps it to a lookup. `false` remembers a window
 * that does not resolve.
 */
function windowResolver() {
  const windows = new LRUCache<string, Window | false>({ max: WINDOW_MEMOS })
  return (q: Record<string, string>, tz: string, now: Date, defaultRange: RangeName): Window | undefined => {
    const memo = JSON.stringify([q.range, q.startDate, q.endDate, tz, defaultRange, Math.floor(now.getTime() / 60_000)])
    let window = windows.get(memo)
    if (window === undefined) {
      try {
        const r = resolveRange({ range: q.range as RangeName | undefined, startDate: q.startDate, endDate: q.endDate }, tz, now, defaultRange)
        window = r.start.isValid && r.end.isValid ? { start: r.start.toMillis(), end: r.end.toMillis() } : false
      } catch {
        window = false
      }
      windows.set(memo, window)
    }
    return window || undefined
  }
}

/**
 * The key is what defines the body: route path, project (and its timezone), the request's query
 * string normalized (parameters sorted), the window it resolves to now (so `range=30d` means
 * another key tomorrow), the origin (the `Link` header repeats it) and the coding a streamed body
 * is sent in for the request's Accept-Encoding (a chart's CSV kept zstd-encoded was replayed, as
 * zstd bytes, to a client that had asked for none); the middleware adds the data watermark.
 *
 * Entries live `nowTtlMs` when the window reaches the present (the watermark is at most
 * `watermarkTtlMs` old, and `/live` moves with the clock) and `closedTtlMs` otherwise.
 *
 * `/live` is never cached: its five minutes end at the request's millisecond, so no two requests
 * share an answer, and its query is one of the cheapest. Neither is a request whose window does
 * not resolve: its handler answers 400.
 */
export function cacheKeys(opts: KeyOptions) {
  const resolveWindow = windowResolver()
  const described = describedRequests()
  return (c: Context<AppEnv>, defaultRange: RangeName): CacheKey | undefined => {
    const project = c.get('project')
    const now = opts.now()
    const accepted = c.req.header('accept-encoding') ?? ''
    const memo = `${defaultRange}\n${project.id}\n${project.timezone}\n${accepted}\n${Math.floor(now.getTime() / 60_000)}\n${c.req.url}`
    let request = described.get(memo)
    if (request === undefined) {
      request = describe(c.req.url, project, accepted, now, defaultRange, resolveWindow) ?? false
      described.set(memo, request)
    }
    if (!request) return undefined
    const found = request
    return { key: found.key, ttlMs: found.cursor || found.end > now.getTime() ? opts.nowTtlMs : opts.closedTtlMs, at: (version) => versioned(found, version) }
  }
}

/**
 * Remembered for the last watermark seen, which changes at most with each insert: the same key
 * string on every hit (its hash computed once for the cache's map) and one SHA-256 per watermark.
 */
function versioned(described: Described, version: string) {
  if (described.versioned?.version !== version) {
    const key = `${described.key}#${version}`
    described.versioned = { version, key, etag: etagOf(key) }
  }
  return described.versioned
}

/** A request's key with what its TTL is decided on. */
interface Described {
  key: string
  end: number
  /** A cursor pins the window of its first page, which may have reached the present. */
  cursor: boolean
  versioned?: { version: string; key: string; etag: string }
}

/** Bounds the memo of described requests by the bytes of their URLs and keys (a query string may be 16 KB). */
const DESCRIBED_BYTES = 8 * 1024 * 1024

/**
 * The key of a URL for a project, coding, route family and minute, remembered: parsing the URL,
 * sorting its parameters and writing the key was a tenth of a cache hit's CPU, for a value that is
 * the same for every request of a dashboard's refresh. `false` remembers one that is not cacheable.
 */
function describedRequests() {
  return new LRUCache<string, Described | false>({
    maxSize: DESCRIBED_BYTES,
    // The key twice: once more with the watermark, once a request has been looked up.
    sizeCalculation: (d, memo) => memo.length + (d ? 2 * d.key.length : 0) + 128,
  })
}

function describe(
  href: string,
  project: { id: string; timezone: string },
  acceptEncoding: string,
  now: Date,
  defaultRange: RangeName,
  resolveWindow: ReturnType<typeof windowResolver>,
): Described | undefined {
  const url = new URL(href)
  if (url.pathname.endsWith('/live')) return undefined
  const params = [...url.searchParams].sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
  const q = Object.fromEntries(url.searchParams)
  const window = resolveWindow(q, q.timezone ?? project.timezone, now, defaultRange)
  if (!window) return undefined
  const coding = negotiateCoding(acceptEncoding || undefined) ?? ''
  const key = JSON.stringify([url.origin, url.pathname, project.id, project.timezone, params, [window.start, window.end], coding])
  return { key, end: window.end, cursor: url.searchParams.has('cursor') }
}

const etagOf = (key: string) => `W/"${hash('sha256', key, 'base64url').slice(0, 27)}"`

/** Whether an If-None-Match header names `etag` (or `*`), in weak comparison. */
export const matchesEtag = (header: string | undefined, etag: string) =>
  header !== undefined && header.split(',').some((t) => t.trim() === '*' || t.trim() === etag || `W/${t.trim()}` === etag)
