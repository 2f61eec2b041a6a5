import type { QueryRunner, QueryStats } from './clickhouse/run.ts'
import type { Project } from './projects.ts'
import type { Metrics } from './telemetry/metrics.ts'

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
    /** The app's Prometheus instruments, for what a handler counts after the response (streamed exports); none when the app has no metrics. */
    metrics: Metrics | undefined
    /** Admission's refusal on the queue's pace, carried out only if the request needs work (http/admission.ts). */
    refusal: (() => Error) | undefined
    /** Parameters accepted only because OpenPanel accepts them, for X-Quarry-Ignored (http/ignored.ts). */
    ignored: string[] | undefined
  }
}
