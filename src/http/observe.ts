import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { matchedRoutes } from 'hono/route'
import type { AppEnv } from '../app-env.ts'
import { logContext } from '../log.ts'
import type { Metrics } from '../telemetry/metrics.ts'
import { SpanStatusCode, type Tracing } from '../telemetry/tracing.ts'

const METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'])
const CACHE_OUTCOMES = new Set(['hit', 'miss', 'coalesced', 'bypass'])

/** The method as a label: anything else a client may send is one value, so labels stay few. */
const methodLabel = (c: Context) => (METHODS.has(c.req.method) ? c.req.method : 'OTHER')

/**
 * The template of the route that answered (`/insights/:projectId/country`), never the raw path:
 * the last matched handler registered for a method, middleware being registered for all. A path no
 * route matches is `unmatched`, so that scanners cannot grow the label set.
 */
export function routeTemplate(c: Context): string {
  const routes = matchedRoutes(c)
  for (let i = routes.length - 1; i >= 0; i--) if (routes[i]!.method !== 'ALL') return routes[i]!.path
  return 'unmatched'
}

/**
 * Everything the request causes runs in its context: log lines carry its id (src/log.ts) and, with
 * tracing on, the engine statements' spans are children of its span, which continues the incoming
 * W3C traceparent. Without tracing, no span is made at all. `untraced` paths (probes and scrapes,
 * which a load balancer and Prometheus send every few seconds and which run no query) make no span
 * either: they would flood the trace backend with spans nobody reads and cost a probe more than
 * its own work.
 */
export const requestContext = (tracing: Tracing | undefined, opts: { untraced?: readonly string[] } = {}) => {
  const untraced = new Set(opts.untraced ?? [])
  return createMiddleware<AppEnv>((c, next) => {
    const context = { requestId: c.get('requestId') } as { requestId: string; traceId?: string }
    if (!tracing || untraced.has(c.req.path)) return logContext.run(context, next)
    return logContext.run(context, () =>
      tracing.request(
        (name) => c.req.header(name),
        async (span) => {
          context.traceId = span.spanContext().traceId
          try {
            await next()
          } finally {
            const route = routeTemplate(c)
            const stats = c.get('stats')
            span.updateName(`${c.req.method} ${route}`)
            span.setAttributes({
              'http.request.method': c.req.method,
              'http.route': route,
              'http.response.status_code': c.res.status,
              'quarry.request_id': context.requestId,
              ...(stats ? { 'quarry.queries': stats.queries } : {}),
              ...(stats?.read ? { 'quarry.rows_read': stats.read.rows, 'quarry.bytes_read': stats.read.bytes } : {}),
            })
            if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
            span.end()
          }
        },
      ),
    )
  })
}

/** Requests by route template, method and status, timed to the response head; what the cache did. */
export const requestMetrics = (metrics: Metrics) =>
  createMiddleware<AppEnv>(async (c, next) => {
    c.set('metrics', metrics)
    const started = performance.now()
    await next()
    metrics.httpDuration.observe({ method: methodLabel(c), route: routeTemplate(c), status: c.res.status }, (performance.now() - started) / 1000)
    const cache = c.res.headers.get('x-quarry-cache')
    if (cache && CACHE_OUTCOMES.has(cache)) metrics.cacheRequests.inc({ outcome: cache })
  })
