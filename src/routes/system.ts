import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi'
import type { AppEnv } from '../app-env.ts'
import type { QueryRunner } from '../clickhouse/run.ts'

const Status = z.object({ status: z.string() }).openapi('Status')

const healthz = createRoute({
  method: 'get',
  path: '/healthz',
  summary: 'The process is up',
  tags: ['system'],
  responses: { 200: { description: 'Up', content: { 'application/json': { schema: Status } } } },
})

const readyz = createRoute({
  method: 'get',
  path: '/readyz',
  summary: 'The engine answers queries',
  tags: ['system'],
  responses: {
    200: { description: 'Ready', content: { 'application/json': { schema: Status } } },
    503: { description: 'The engine does not answer', content: { 'application/json': { schema: Status } } },
  },
})

export function systemRoutes(runner: QueryRunner) {
  return new OpenAPIHono<AppEnv>()
    .openapi(healthz, (c) => c.json({ status: 'ok' }, 200))
    .openapi(readyz, async (c) => {
      try {
        await runner.rows({ name: 'readyz', sql: 'SELECT 1 AS ok', params: {} }, { timeoutS: 2 })
        return c.json({ status: 'ready' }, 200)
      } catch {
        c.header('Retry-After', '5')
        return c.json({ status: 'unavailable' }, 503)
      }
    })
}
