import { DateTime } from 'luxon'
import type { Logger } from 'pino'
import type { QueryRunner } from '../../clickhouse/run.ts'
import { eventInsertsStatement } from '../../query/event-inserts.ts'
import { newestClosing } from '../../query/page-rollup.ts'
import { renderSql } from '../../query/sql-templates.ts'
import { clickhouseInstant } from '../../query/time-range.ts'

export interface BuildOptions {
  runner: QueryRunner
  logger: Logger
  /** The clock that decides which hours are closed. */
  now: () => Date
  /** max_execution_time of each build statement. */
  timeoutS: number
}

interface Project {
  id: string
  timezone: string
}

/** Inserts are counted from this long before a build: older ones committed long before it read. */
const INSERTS_MARGIN_HOURS = 24

const BUILD_STEPS = ['held_out', 'views', 'repeats', 'entries', 'keys', 'visitors'].map((step) => `page_rollup_build_${step}`)
const ROLLUP_TABLES = ['page_rollup_days', 'page_rollup_keys', 'page_rollups'] as const
const COMPACTED_TABLES = ['page_rollup_days', 'page_rollup_keys'] as const

const instant = (text: string) => DateTime.fromSQL(text, { zone: 'UTC' })

/**
 * Builds one rollup of the project: the steps of sql/queries/page_rollup_build_*, kept only if no
 * insert reached before C while they read, then registered; the builds before the one it replaces
 * are dropped. Returns how long it took, or undefined when the build was not kept.
 */
export async function buildRollup(project: Project, o: BuildOptions): Promise<number | undefined> {
  const { runner, logger } = o
  const started = performance.now()
  const read = { timeoutS: o.timeoutS }
  const [clock] = await runner.rows<{ now: string; previous: number }>(
    { name: 'page_rollup_clock', sql: renderSql('page_rollup_clock'), params: { project: project.id } },
    read,
  )
  const built = instant(clock!.now)
  const version = built.toMillis()
  const closedAt = newestClosing(DateTime.fromJSDate(o.now()), project.timezone)
  const since = built.minus({ hours: INSERTS_MARGIN_HOURS })
  const params = {
    project: project.id,
    version,
    timezone: project.timezone,
    closed: clickhouseInstant(closedAt),
    since: clickhouseInstant(since),
  }
  const countInserts = async () => {
    const [row] = await runner.rows<{ closed_inserts: number }>(eventInsertsStatement(project.id, closedAt, since), read)
    return row!.closed_inserts
  }
  const drop = (v: number) => dropBuild(runner, project.id, v)
  const before = await countInserts()
  try {
    for (const name of BUILD_STEPS) {
      await runner.command({ name, sql: `${renderSql(name)}\nSETTINGS max_execution_time = ${o.timeoutS}`, params })
    }
  } catch (err) {
    await drop(version).catch(() => {})
    throw err
  }
  // An insert reaching before C while the build read may be half in the rollup: not kept.
  if ((await countInserts()) !== before) {
    await drop(version)
    logger.info({ project: project.id }, 'page rollup: events before C changed while building; not kept')
    return undefined
  }
  for (const table of COMPACTED_TABLES) {
    await runner.command({ name: 'versioned_compact', sql: renderSql('versioned_compact', { table }), params: { project: project.id, version } })
  }
  await runner.command({
    name: 'page_rollup_register',
    sql: renderSql('page_rollup_register'),
    params: { ...params, built: clickhouseInstant(built), inserts: before },
  })
  // The build replaced is kept: requests planned with it may still be reading.
  if (clock!.previous > 0) {
    const older = await runner.rows<{ version: number }>(
      { name: 'page_rollup_versions', sql: renderSql('page_rollup_versions'), params: { project: project.id, keep: clock!.previous } },
      read,
    )
    for (const { version: old } of older) await drop(old)
  }
  const ms = Math.round(performance.now() - started)
  logger.info({ project: project.id, closedAt: closedAt.toISO(), ms }, 'page rollup built')
  return ms
}

/** Removes one build of the project from every rollup table. */
async function dropBuild(runner: QueryRunner, projectId: string, version: number): Promise<void> {
  for (const table of ROLLUP_TABLES) {
    await runner.command({ name: 'versioned_drop', sql: renderSql('versioned_drop', { table }), params: { project: projectId, version } })
  }
}
