import { OpenAPIHono } from '@hono/zod-openapi'
import type { Logger } from 'pino'
import type { AppEnv } from './app-env.ts'
import { OverloadedError } from './clickhouse/gate.ts'
import { emptyStats, type QueryRunner } from './clickhouse/run.ts'
import type { Config } from './config.ts'
import { createAuth, type AuthHooks } from './auth/middleware.ts'
import { accessLog } from './http/access-log.ts'
import { admission, admissionLimit, admitted } from './http/admission.ts'
import { compressLarge } from './http/compression.ts'
import { apiCors } from './http/cors.ts'
import { explainable } from './http/explain.ts'
import { reportIgnored } from './http/ignored.ts'
import { queryStringLimit } from './http/limits.ts'
import { ApiError, errorBody, toApiError } from './http/errors.ts'
import { invalidParameters } from './query/errors.ts'
import { requestId } from './http/request-id.ts'
import { requestContext, requestMetrics } from './http/observe.ts'
import { createMetrics, type Metrics } from './telemetry/metrics.ts'
import type { Tracing } from './telemetry/tracing.ts'
import { metricsRoutes } from './routes/metrics.ts'
import { methodNotAllowed } from 'hono/method-not-allowed'
import type { ResponseCache } from './http/cache/middleware.ts'
import type { SealedHistory } from './services/sealed/index.ts'
import { exportChartsRoutes } from './routes/export-charts.ts'
import { exportEventsRoutes } from './routes/export-events.ts'
import { insightsRoutes } from './routes/insights.ts'
import { insightsEventsRoutes } from './routes/insights-events.ts'
import { insightsProfilesRoutes } from './routes/insights-profiles.ts'
import { productRoutes } from './routes/product.ts'
import { insightsTrafficRoutes } from './routes/insights-traffic.ts'
import { mountDocs } from './routes/docs.ts'
import { issueDetails } from './routes/query-reader.ts'
import { HEALTH_PATHS, systemRoutes } from './routes/system.ts'
import { explorerRoutes } from './routes/explorer.ts'
import { manageRoutes } from './routes/manage.ts'
import { groupsRoutes } from './routes/groups.ts'

export interface AppDeps {
  config: Config
  runner: QueryRunner
  logger: Logger
  /** Signs pagination cursors (QUARRY_SECRET, or a key generated once and kept with the data). */
  signingKey: Buffer
  /** The clock the date ranges resolve against; tests pin it. */
  now?: () => Date
  /** Shown in the OpenAPI document. */
  version?: string
  /** Test seams of authentication and rate limiting. */
  auth?: AuthHooks
  /** Cache, coalescing and ETags of the aggregate routes (src/http/cache/); off when absent. */
  responseCache?: ResponseCache | false
  /** Aborted once graceful shutdown has begun: /healthz/ready answers 503 from then on. */
  shutdown?: AbortSignal
  /** The sealed history, when the caller runs one (quarry serve does; see QUARRY_SEALED). */
  sealed?: SealedHistory
  /** The registry GET /metrics serves (the runtime's, so engine metrics are in it); a fresh one when absent, none with false. */
  metrics?: Metrics | false
  /** Request spans (OTEL_EXPORTER_OTLP_ENDPOINT); none when absent. */
  tracing?: Tracing
}

/** Builds the whole HTTP application without listening, so tests drive it with app.request(). */
export function buildApp(deps: AppDeps) {
  const app = new OpenAPIHono<AppEnv>({
    // Every route's validation failure is a 400 in the one envelope, naming each problem.
    defaultHook: (result) => {
      if (!result.success) throw invalidParameters(issueDetails(result.error.issues))
    },
  })

  const metrics = deps.metrics === false ? undefined : (deps.metrics ?? createMetrics())
  if (metrics && deps.responseCache) metrics.watch({ cache: deps.responseCache.lru })
  app.use('*', requestId)
  // Probes and scrapes: never refused for overload, never traced.
  const probes = [...HEALTH_PATHS, '/metrics']
  app.use('*', requestContext(deps.tracing, { untraced: probes }))
  if (metrics) app.use('*', requestMetrics(metrics))
  app.use(
    '*',
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) => {
        const err = new ApiError(405, 'method_not_allowed', `${c.req.method} is not allowed on ${c.req.path}`)
        return c.json(errorBody(err, c.get('requestId')), 405, { Allow: methods.join(', ') })
      },
    }),
  )
  app.use('*', accessLog(deps.logger))
  // Overload is judged here, before any work, so requests cannot pile up in front of the query gate;
  // a refusal on the queue's pace is carried out past the response cache (`admitted`).
  app.use(
    '*',
    admission({
      limit: admissionLimit(deps.config),
      exempt: probes,
      refused: () => metrics?.admissionRefusals.inc(),
      pace: { slots: deps.config.QUARRY_MAX_CONCURRENT_QUERIES, queueWaitMs: deps.config.QUARRY_MAX_QUEUE_WAIT_MS },
    }),
  )
  app.use('*', async (c, next) => {
    const stats = emptyStats()
    c.set('stats', stats)
    const started = performance.now()
    await next()
    if (stats.queries > 0) {
      c.header('Server-Timing', `db;dur=${stats.dbMs.toFixed(1)}, total;dur=${(performance.now() - started).toFixed(1)}`)
      const read = stats.read ? `rows_read=${stats.read.rows}; bytes_read=${stats.read.bytes}; ` : ''
      c.header('X-Quarry-Stats', `${read}queries=${stats.queries}`)
    }
  })

  app.use('*', queryStringLimit)
  app.use('*', compressLarge())
  // CORS answers preflights before authentication, which a preflight cannot pass.
  app.use('/insights/*', apiCors)
  app.use('/export/*', apiCors)
  app.use('/manage/*', apiCors)

  // Registered before any /insights or /export route, so it runs before their parameter validation.
  const auth = createAuth({ ...deps, metrics })
  app.use('/insights/*', auth.authenticate, auth.rateLimit)
  app.use('/insights/:projectId/*', auth.projectFrom('path'))
  app.use('/export/*', auth.authenticate, auth.rateLimit, auth.projectFrom('query'))
  app.use('/insights/*', explainable(deps.runner))
  app.use('/export/*', explainable(deps.runner))
  app.use('/manage/*', auth.authenticate, auth.rateLimit, explainable(deps.runner))
  // After authentication and project access, so only a caller allowed to read a project gets its cached body.
  if (deps.responseCache) {
    app.use('/insights/*', deps.responseCache.middleware('7d'))
    app.use('/export/charts', deps.responseCache.middleware('30d'))
  }
  app.use('*', admitted)

  app.route('/', systemRoutes({ runner: deps.runner, shutdown: deps.shutdown }))
  // Inside the cache, so that a cached answer keeps its X-Quarry-Ignored.
  app.use('/insights/*', reportIgnored)
  app.use('/export/*', reportIgnored)
  if (metrics) app.route('/', metricsRoutes({ metrics, token: deps.config.QUARRY_METRICS_TOKEN }))

  app.route(
    '/',
    insightsRoutes({
      signingKey: deps.signingKey,
      now: deps.now ?? (() => new Date()),
      queryTimeoutS: deps.config.QUARRY_QUERY_TIMEOUT_S,
      sealed: deps.sealed,
    }),
  )
  app.route('/', insightsTrafficRoutes({ now: deps.now ?? (() => new Date()), queryTimeoutS: deps.config.QUARRY_QUERY_TIMEOUT_S, sealed: deps.sealed }))
  app.route('/', productRoutes({ now: deps.now ?? (() => new Date()), queryTimeoutS: deps.config.QUARRY_QUERY_TIMEOUT_S, sealed: deps.sealed }))
  app.route('/', insightsEventsRoutes({ now: deps.now ?? (() => new Date()), queryTimeoutS: deps.config.QUARRY_QUERY_TIMEOUT_S }))
  app.route('/', insightsProfilesRoutes({ now: deps.now ?? (() => new Date()), queryTimeoutS: deps.config.QUARRY_QUERY_TIMEOUT_S }))
  app.route(
    '/',
    exportEventsRoutes({
      signingKey: deps.signingKey,
      now: deps.now ?? (() => new Date()),
      queryTimeoutS: deps.config.QUARRY_QUERY_TIMEOUT_S,
      exportTimeoutS: deps.config.QUARRY_EXPORT_TIMEOUT_S,
      logger: deps.logger,
    }),
  )
  app.route(
    '/',
    exportChartsRoutes({
      now: deps.now ?? (() => new Date()),
      queryTimeoutS: deps.config.QUARRY_QUERY_TIMEOUT_S,
      sealed: deps.sealed,
      logger: deps.logger,
    }),
  )

  app.route('/', manageRoutes({ queryTimeoutS: deps.config.QUARRY_QUERY_TIMEOUT_S }))
  app.route('/', groupsRoutes({ queryTimeoutS: deps.config.QUARRY_QUERY_TIMEOUT_S }))
  app.route('/', explorerRoutes())

  mountDocs(app, deps.version ?? '0.0.0')

  app.notFound((c) => {
    const err = new ApiError(404, 'not_found', `no route for ${c.req.method} ${c.req.path}`)
    return c.json(errorBody(err, c.get('requestId')), 404)
  })

  app.onError((thrown, c) => {
    const err = toApiError(thrown)
    // A refusal under overload is the service working as meant (counted, and in the access log): an
    // error line with a stack for each would cost the most when the process has the least to spare.
    if (err.status >= 500 && !(thrown instanceof OverloadedError)) deps.logger.error({ err: thrown, requestId: c.get('requestId') }, 'request failed')
    for (const [name, value] of Object.entries(err.headers)) c.header(name, value)
    return c.json(errorBody(err, c.get('requestId')), err.status)
  })

  return app
}

export type QuarryApp = ReturnType<typeof buildApp>
