import { createMiddleware } from 'hono/factory'
import type { Logger } from 'pino'
import type { AppEnv } from '../app-env.ts'

/** One line per request, written once the response status is known. */
export const accessLog = (logger: Logger) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const started = performance.now()
    await next()
    logger.info(
      {
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        requestId: c.get('requestId'),
      },
      'request',
    )
  })
