import { getConnInfo } from '@hono/node-server/conninfo'
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../app-env.ts'
import { BoundedMap } from './bounded-map.ts'
import { ApiError } from './errors.ts'

const MAX_KEYS = 100_000

export interface LimiterOptions {
  limit: number
  windowMs: number
  /** Monotonic milliseconds. */
  clock: () => number
  maxKeys?: number
}

export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until the bucket is full again. */
  resetS: number
  /** Seconds until the next request is allowed (0 when it is now). */
  retryAfterS: number
}

/**
 * A token bucket per key: `limit` tokens, refilled evenly over `windowMs`. It is kept as GCRA, a
 * single "theoretical arrival time" per key, which is the same bucket without fractional tokens.
 */
export class RateBuckets {
  readonly #tat: BoundedMap<number>
  readonly #interval: number
  readonly #tolerance: number

  constructor(private readonly opts: LimiterOptions) {
    this.#interval = opts.windowMs / opts.limit
    this.#tolerance = opts.windowMs - this.#interval
    // A key whose arrival time has passed has a full bucket, the same as no entry at all.
    this.#tat = new BoundedMap({
      maxKeys: opts.maxKeys ?? MAX_KEYS,
      sweepEveryMs: opts.windowMs,
      isIdle: (tat, now) => tat <= now,
    })
  }

  take(key: string): RateDecision {
    const now = this.opts.clock()
    const tat = Math.max(this.#tat.get(key) ?? now, now)
    const { limit } = this.opts
    if (tat - now > this.#tolerance) {
      return {
        allowed: false,
        limit,
        remaining: 0,
        resetS: Math.ceil((tat - now) / 1000),
        retryAfterS: Math.max(1, Math.ceil((tat - now - this.#tolerance) / 1000)),
      }
    }
    const next = tat + this.#interval
    this.#tat.set(key, next, now)
    return {
      allowed: true,
      limit,
      // The epsilon keeps a window that does not divide evenly by the limit from losing a token to rounding.
      remaining: Math.floor((this.opts.windowMs - (next - now)) / this.#interval + 1e-9),
      resetS: Math.ceil((next - now) / 1000),
      retryAfterS: 0,
    }
  }
}

interface FailureWindow {
  start: number
  failures: number
  /** Verifications under way: they count against the limit until they end, so a burst of guesses cannot outrun it. */
  pending: number
}

/**
 * Failed authentications per source address in fixed windows: once `limit` is reached the address
 * is refused until its window ends, whatever it presents.
 */
export class FailureWindows {
  readonly #windows: BoundedMap<FailureWindow>

  constructor(private readonly opts: LimiterOptions) {
    this.#windows = new BoundedMap({
      maxKeys: opts.maxKeys ?? MAX_KEYS,
      sweepEveryMs: opts.windowMs,
      isIdle: (w, now) => w.pending === 0 && now - w.start >= opts.windowMs,
    })
  }

  #current(key: string): FailureWindow {
    const now = this.opts.clock()
    let w = this.#windows.get(key)
    if (!w) {
      w = { start: now, failures: 0, pending: 0 }
      this.#windows.set(key, w, now)
    } else if (now - w.start >= this.opts.windowMs) {
      w.start = now
      w.failures = 0
    }
    return w
  }

  /** Milliseconds until the address may try again; 0 when it may now. */
  blockedForMs(key: string): number {
    if (!this.#windows.get(key)) return 0
    const w = this.#current(key)
    return w.failures + w.pending >= this.opts.limit ? w.start + this.opts.windowMs - this.opts.clock() : 0
  }

  /** Counts a verification as under way; the returned function ends it. */
  hold(key: string): () => void {
    const w = this.#current(key)
    w.pending += 1
    return () => {
      w.pending -= 1
    }
  }

  fail(key: string): void {
    this.#current(key).failures += 1
  }
}

/** Every response after it carries the RateLimit-* (and X-RateLimit-*) headers of `keyOf`'s bucket; beyond it → 429. */
export const rateLimit = (buckets: RateBuckets, keyOf: (c: Context<AppEnv>) => string, windowS: number, refused?: () => void) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const d = buckets.take(keyOf(c))
    // OpenPanel's own names beside the standard draft's, for clients that read those.
    const headers = {
      'RateLimit-Limit': String(d.limit),
      'RateLimit-Remaining': String(d.remaining),
      'RateLimit-Reset': String(d.resetS),
      'X-RateLimit-Limit': String(d.limit),
      'X-RateLimit-Remaining': String(d.remaining),
      'X-RateLimit-Reset': String(d.resetS),
    }
    if (!d.allowed) {
      refused?.()
      throw new ApiError(
        429,
        'rate_limited',
        `more than ${d.limit} requests in ${windowS} s; retry in ${d.retryAfterS} s`,
        undefined,
        { ...headers, 'Retry-After': String(d.retryAfterS) },
      )
    }
    await next()
    // Set on the finished response, so error responses and streamed bodies carry them too. On its
    // headers directly: c.header() on a finished response copies it into a web Response first, and
    // the node server then writes the body through a stream instead of straight from its bytes.
    const finished = c.res.headers
    for (const [name, value] of Object.entries(headers)) finished.set(name, value)
  })

export type AddressResolver = (c: Context) => string

/**
 * The peer address of the connection, or with `trustedProxies` > 0 the address that many proxies
 * back in X-Forwarded-For (each trusted proxy appends the address it saw). Without a node socket
 * (app.request in tests) every request shares one key.
 */
export function connectionAddress(trustedProxies: number): AddressResolver {
  return (c) => {
    if (trustedProxies > 0) {
      const hops = (c.req.header('x-forwarded-for') ?? '').split(',').map((s) => s.trim()).filter(Boolean)
      const forwarded = hops.at(-trustedProxies)
      if (forwarded) return forwarded
    }
    try {
      return getConnInfo(c).remote.address ?? 'unknown'
    } catch {
      return 'unknown'
    }
  }
}
