import type { QueryStats } from './clickhouse/run.ts'

/** What middleware leaves on the Hono context for the handlers after it. */
export interface AppEnv {
  Variables: {
    requestId: string
    stats: QueryStats
  }
}
