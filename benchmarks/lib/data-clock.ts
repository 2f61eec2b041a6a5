import { DateTime } from 'luxon'
import { sealedLatestStatement } from '../../src/query/sealed.ts'
import type { QueryRunner } from '../../src/clickhouse/run.ts'
import type { Runtime } from '../../src/runtime.ts'
import { SealedHistory } from '../../src/services/sealed/index.ts'

export interface DataClock {
  /** Half an hour past the project's last event: windows end where the data does, and C leaves the hour after it live, as under traffic. */
  clock: DateTime
  now: () => Date
  events: number
  sealed: SealedHistory
  /** How long the build took, or null when an earlier run's build for this clock was kept. */
  buildMs: number | null
}

/** Half an hour past a project's last event, and how many events it has. */
export async function dataClock(runner: QueryRunner, project: string): Promise<{ clock: DateTime; events: number }> {
  const [last] = await runner.rows<{ last: string; events: number }>(
    { name: 'last', sql: 'SELECT max(created_at) AS last, count() AS events FROM events WHERE project_id = {p:String}', params: { p: project } },
    { timeoutS: 600 },
  )
  return { clock: DateTime.fromSQL(last!.last, { zone: 'UTC' }).plus({ minutes: 30 }), events: last!.events }
}

/**
 * A sealed history for a benchmark on the data's clock rather than the wall clock, the project's
 * history sealed first (timed), as `quarry serve` would have it; `reuse` keeps a build an earlier
 * run made (the data does not change between runs).
 */
export async function sealOnDataClock(rt: Runtime, project: string, o: { reuse: boolean; queryTimeoutS: number }): Promise<DataClock> {
  const { clock, events } = await dataClock(rt.runner, project)
  const now = () => clock.toJSDate()
  const sealed = new SealedHistory({ runner: rt.runner, logger: rt.logger, now, queryTimeoutS: o.queryTimeoutS, rebuildIntervalMs: 3_600_000 })
  const [kept] = o.reuse ? await rt.runner.rows(sealedLatestStatement([project]), { timeoutS: 60 }) : []
  const started = performance.now()
  if (!kept) await sealed.build(project)
  return { clock, now, events, sealed, buildMs: kept ? null : Math.round(performance.now() - started) }
}
