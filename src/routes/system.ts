import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi'
import type { AppEnv } from '../app-env.ts'
import type { QueryRunner } from '../clickhouse/run.ts'

const Status = z.object({ status: z.string() }).openapi('Status')
const Health = z
  .object({
    ready: z.boolean(),
    ch: z.boolean().openapi({ description: 'ClickHouse answers' }),
    failedDependencies: z.array(z.string()),
    workingDependencies: z.array(z.string()),
  })
  .openapi('Health', { description: "OpenPanel's health body; ClickHouse is Quarry's one dependency" })
const Live = z.object({ live: z.boolean() }).openapi('Liveness')
const Ready = z.object({ ready: z.boolean(), reason: z.string().optional() }).openapi('Readiness')

const json = <S extends z.ZodType>(description: string, schema: S) => ({ description, content: { 'application/json': { schema } } })

const system = <R extends Parameters<typeof createRoute>[0]['responses']>(path: string, summary: string, responses: R) =>
  createRoute({ method: 'get', path, summary, tags: ['system'], responses })

const healthz = system('/healthz', 'The process is up', { 200: json('Up', Status) })
const readyz = system('/readyz', 'The engine answers queries', {
  200: json('Ready', Status),
  503: json('The engine does not answer', Status),
})
const healthcheck = system('/healthcheck', "The engine answers queries (OpenPanel's health route)", {
  200: json('Ready', Health),
  503: json('The engine does not answer', Health),
})
const live = system('/healthz/live', "The process is up (OpenPanel's liveness route)", { 200: json('Up', Live) })
const ready = system('/healthz/ready', "Taking requests: 503 once shutdown has begun (OpenPanel's readiness route)", {
  200: json('Taking requests', Ready),
  503: json('Shutting down', Ready),
})

/** The probes: no credentials, no rate limit, and never refused by admission (app.ts). */
export const HEALTH_PATHS = [healthz, readyz, healthcheck, live, ready].map((route) => route.path)

export interface SystemDeps {
  runner: QueryRunner
  /** Aborted once graceful shutdown has begun. */
  shutdown?: AbortSignal
}

/**
 * Health routes: no credentials, no rate limit; a probe of the engine never waits long, and goes
 * ahead of the gate's queue (a busy engine that answers is up).
 */
export function systemRoutes(deps: SystemDeps) {
  const engineAnswers = () =>
    deps.runner.rows({ name: 'readyz', sql: 'SELECT 1 AS ok', params: {} }, { timeoutS: 2, urgent: true }).then(
      () => true,
      () => false,
    )
  return new OpenAPIHono<AppEnv>()
    .openapi(healthz, (c) => c.json({ status: 'ok' }, 200))
    .openapi(readyz, async (c) => {
      if (await engineAnswers()) return c.json({ status: 'ready' }, 200)
      c.header('Retry-After', '5')
      return c.json({ status: 'unavailable' }, 503)
    })
    .openapi(healthcheck, async (c) => {
      const ch = await engineAnswers()
      const body = { ready: ch, ch, failedDependencies: ch ? [] : ['ch'], workingDependencies: ch ? ['ch'] : [] }
      if (ch) return c.json(body, 200)
      c.header('Retry-After', '5')
      return c.json(body, 503)
    })
    .openapi(live, (c) => c.json({ live: true }, 200))
    .openapi(ready, (c) => {
      if (!deps.shutdown?.aborted) return c.json({ ready: true }, 200)
      c.header('Retry-After', '1')
      return c.json({ ready: false, reason: 'shutting down' }, 503)
    })
}
