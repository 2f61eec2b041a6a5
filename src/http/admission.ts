import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../app-env.ts'
import { OverloadedError } from '../clickhouse/gate.ts'

/**
 * Caps the requests in progress. The query gate bounds the work waiting for ClickHouse, but only
 * for requests that get that far: when the offered load outruns the event loop itself (parsing,
 * authentication, validation, serialisation), requests pile up in front of the gate, each holding
 * its memory, and latency grows without bound while the gate sees no queue. Past `limit`, a request
 * is refused at once with 503 overloaded, which costs next to nothing, so memory and waiting stay
 * bounded whatever arrives. `exempt` paths (liveness) are never refused.
 */
export function admission(opts: { limit: number; exempt?: readonly string[]; refused?: () => void }) {
  let inFlight = 0
  const exempt = new Set(opts.exempt ?? [])
  const middleware = createMiddleware<AppEnv>(async (c, next) => {
    if (exempt.has(c.req.path)) return next()
    if (inFlight >= opts.limit) {
      opts.refused?.()
      throw new OverloadedError()
    }
    inFlight++
    try {
      await next()
    } finally {
      inFlight--
    }
  })
  return Object.assign(middleware, {
    get inFlight() {
      return inFlight
    },
  })
}

/**
 * Requests in progress at once: room for every query the gate admits or queues, twice over (a
 * request spends part of its life outside the gate: authenticating, serialising, or between its
 * queries).
 */
export const admissionLimit = (config: { QUARRY_MAX_CONCURRENT_QUERIES: number; QUARRY_MAX_QUEUED_QUERIES: number }) =>
  2 * (config.QUARRY_MAX_CONCURRENT_QUERIES + config.QUARRY_MAX_QUEUED_QUERIES)
