import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi'
import { timingSafeEqual } from 'node:crypto'
import type { AppEnv } from '../app-env.ts'
import { ApiError } from '../http/errors.ts'
import type { Metrics } from '../telemetry/metrics.ts'
import { ErrorBodySchema } from './openapi-shared.ts'

const scrape = createRoute({
  method: 'get',
  path: '/metrics',
  summary: 'Prometheus metrics of this instance (text exposition format 0.0.4)',
  description:
    "Quarry's own metrics, not OpenPanel's `/insights/{projectId}/metrics`. Open like the health routes unless QUARRY_METRICS_TOKEN is set, " +
    'then `Authorization: Bearer <token>`; never refused by admission control or rate limits.',
  tags: ['system'],
  security: [{ metricsToken: [] }],
  responses: {
    200: { description: 'Every metric of this instance', content: { 'text/plain': { schema: z.string() } } },
    401: {
      description: 'QUARRY_METRICS_TOKEN is set and the request does not carry it',
      content: { 'application/json': { schema: ErrorBodySchema } },
    },
  },
})

const sameToken = (given: string, token: string) => {
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** GET /metrics: the app's registry, optionally behind a bearer token. */
export function metricsRoutes(deps: { metrics: Metrics; token?: string }) {
  const { registry } = deps.metrics
  const routes = new OpenAPIHono<AppEnv>()
  routes.openAPIRegistry.registerComponent('securitySchemes', 'metricsToken', {
    type: 'http',
    scheme: 'bearer',
    description: 'QUARRY_METRICS_TOKEN, when set; without it /metrics needs no credentials',
  })
  return routes.openapi(scrape, async (c) => {
    if (deps.token !== undefined) {
      const given = /^Bearer (.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]
      if (given === undefined || !sameToken(given, deps.token)) {
        throw new ApiError(401, 'invalid_credentials', 'missing or invalid bearer token for /metrics (QUARRY_METRICS_TOKEN)', undefined, {
          'WWW-Authenticate': 'Bearer realm="metrics"',
        })
      }
    }
    return c.text(await registry.metrics(), 200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' })
  })
}
