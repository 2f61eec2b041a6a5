import { OpenAPIHono } from '@hono/zod-openapi'
import type { Logger } from 'pino'
import type { AppEnv } from './app-env.ts'
import { emptyStats, type QueryRunner } from './clickhouse/run.ts'
import type { Config } from './config.ts'
import { accessLog } from './http/access-log.ts'
import { ApiError, errorBody, invalidParameters, toApiError } from './http/errors.ts'
import { requestId } from './http/request-id.ts'
import { systemRoutes } from './routes/system.ts'

export interface AppDeps {
  config: Config
  runner: QueryRunner
  logger: Logger
  /** The clock the date ranges resolve against; tests pin it. */
  now?: () => Date
}

/** Builds the whole HTTP application without listening, so tests drive it with app.request(). */
export function buildApp(deps: AppDeps) {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        throw invalidParameters(
          result.error.issues.map((issue) => ({ path: issue.path.join('.') || '(query)', message: issue.message })),
        )
      }
    },
  })

  app.use('*', requestId)
  app.use('*', accessLog(deps.logger))
  app.use('*', async (c, next) => {
    c.set('stats', emptyStats())
    await next()
  })

  app.route('/', systemRoutes(deps.runner))

  app.notFound((c) => {
    const err = new ApiError(404, 'not_found', `no route for ${c.req.method} ${c.req.path}`)
    return c.json(errorBody(err, c.get('requestId')), 404)
  })

  app.onError((thrown, c) => {
    const err = toApiError(thrown)
    if (err.status >= 500) deps.logger.error({ err: thrown, requestId: c.get('requestId') }, 'request failed')
    for (const [name, value] of Object.entries(err.headers)) c.header(name, value)
    return c.json(errorBody(err, c.get('requestId')), err.status)
  })

  return app
}

export type QuarryApp = ReturnType<typeof buildApp>
