import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../app-env.ts'
import { OverloadedError } from '../clickhouse/gate.ts'

/** Weight of the newest observation in the moving averages of the pace. */
const EWMA_WEIGHT = 0.2

/**
 * Caps the requests in progress. The query gate bounds the work waiting for ClickHouse, but only
 * for requests that get that far: when the offered load outruns the event loop itself (parsing,
 * authentication, validation, serialisation), requests pile up in front of the gate, each holding
 * its memory, and latency grows without bound while the gate sees no queue. Past `limit`, a request
 * is refused at once with 503 overloaded, which costs next to nothing, so memory and waiting stay
 * bounded whatever arrives. `exempt` paths (liveness) are never refused.
 *
 * With `pace`, a request that would wait longer than `queueWaitMs` for the ones ahead of it is
 * refused too. Judged on arrival, rather than at its first query: a request may wait for shared
 * reads (the cache's watermark, the sealed history's state) before it asks the gate for anything,
 * and requests admitted meanwhile would all pass a queue that looks short. But the verdict is
 * carried out only where the request turns out to need work (`admitted`, past the response cache):
 * a cache hit or a request coalesced onto one in flight joins no queue, and refusing it on the
 * queue's pace turned a warm cache's expiries into 503s (c=32, 22 keys expiring at once: 172 of
 * 30,682 answers at the sixteenth stop's 100M run). The
 * wait is (requests in progress beyond `slots`, not counting those whose client has gone: they hold
 * the engine, if at all, through the gate) × (time between two completions while saturated);
 * until that is measured, the time a request took when it did not wait, divided by `slots`. Only
 * requests that ran a query count, so that cheap ones (/docs, cache hits) do not speed up the pace;
 * and only requests that asked for a query count as ahead, so that cheap ones are not refused on a
 * pace they take no part in (c=32 over a warm cache after a burst of misses: 3 % answered 503).
 */
export function admission(opts: {
  limit: number
  exempt?: readonly string[]
  refused?: () => void
  pace?: { slots: number; queueWaitMs: number }
}) {
  let inFlight = 0
  /** The requests in progress: one whose client has gone holds no one up. */
  const live = new Set<Context<AppEnv>>()
  const exempt = new Set(opts.exempt ?? [])
  let gapMs = 0
  let lastDone = 0
  let serviceMs = 0
  const pace = opts.pace
  /** Requests in progress that asked for a query and whose client is still there. */
  const querying = () => {
    let n = 0
    // The signal is read only for a request that asked: the node server builds a whole web Request
    // for it, which was a third of a cache hit's CPU; a request that asked has made it already.
    for (const c of live) if ((c.get('stats')?.asked ?? 0) > 0 && !c.req.raw.signal.aborted) n++
    return n
  }
  const wouldWaitMs = () => {
    if (!pace || live.size < pace.slots) return 0
    const ahead = querying() + 1 - pace.slots
    if (ahead <= 0) return 0
    return ahead * (gapMs > 0 ? gapMs : serviceMs / pace.slots)
  }
  const completed = (startedMs: number, waited: boolean, shared: boolean) => {
    const now = performance.now()
    if (!pace) return
    if (!waited) serviceMs = serviceMs === 0 ? now - startedMs : serviceMs * (1 - EWMA_WEIGHT) + (now - startedMs) * EWMA_WEIGHT
    // Only a gap during which every slot stayed busy measures how fast requests get through, and
    // only requests that query keep a slot busy: counted by requests in progress, cache hits under
    // load kept every gap "saturated", so the seconds between two expiries of a warm cache's entries
    // were taken for one request's turn (588 ms a turn on M, and the expiry's misses refused). A gap
    // that ends a wait for shared work (a snapshot write, outside any slot) times that work, not a
    // turn: those requests' turns come right after it, in the next gaps.
    const saturated = querying() >= pace.slots
    if (lastDone > 0 && saturated && !shared) gapMs = gapMs === 0 ? now - lastDone : gapMs * (1 - EWMA_WEIGHT) + (now - lastDone) * EWMA_WEIGHT
    lastDone = saturated ? now : 0
  }
  const middleware = createMiddleware<AppEnv>(async (c, next) => {
    if (exempt.has(c.req.path)) return next()
    if (inFlight >= opts.limit) {
      opts.refused?.()
      throw new OverloadedError()
    }
    if (pace && wouldWaitMs() > pace.queueWaitMs) {
      c.set('refusal', () => {
        opts.refused?.()
        return new OverloadedError(`the requests ahead would not be through within ${pace.queueWaitMs} ms`)
      })
    }
    const waited = pace !== undefined && inFlight >= pace.slots
    const started = performance.now()
    inFlight++
    live.add(c)
    try {
      await next()
    } finally {
      inFlight--
      live.delete(c)
      const stats = c.get('stats')
      if (stats && stats.queries > 0) completed(started, waited, stats.waited > 0)
    }
  })
  return Object.assign(middleware, {
    get inFlight() {
      return inFlight
    },
  })
}

/** Carries out admission's verdict on a request that gets this far: it needs work of its own. */
export const admitted = createMiddleware<AppEnv>(async (c, next) => {
  const refusal = c.get('refusal')
  if (refusal) throw refusal()
  return next()
})

/**
 * Requests in progress at once: room for every query the gate admits or queues, twice over (a
 * request spends part of its life outside the gate: authenticating, serialising, or between its
 * queries).
 */
export const admissionLimit = (config: { QUARRY_MAX_CONCURRENT_QUERIES: number; QUARRY_MAX_QUEUED_QUERIES: number }) =>
  2 * (config.QUARRY_MAX_CONCURRENT_QUERIES + config.QUARRY_MAX_QUEUED_QUERIES)
