import type { QueryRunner, QueryStats } from './clickhouse/run.ts'
import type { Project } from './projects.ts'

/** The caller, once its credentials are verified; write clients never get this far. */
export interface AuthenticatedClient {
  id: string
  type: 'read' | 'root'
  projectId: string | null
  organizationId: string
}

/** What middleware leaves on the Hono context for the handlers after it. */
export interface AppEnv {
  Variables: {
    requestId: string
    stats: QueryStats
    client: AuthenticatedClient
    /** The project the request addresses, after the access check. */
    project: Project
    /** The runner for this request: the real one, or one that records for explain=sql. */
    runner: QueryRunner
  }
}
