import { DateTime } from 'luxon'
import type { Logger } from 'pino'
import type { QueryRunner, Statement } from '../../clickhouse/run.ts'
import { DIMENSIONS, type Dimension } from '../../query/dimensions.ts'
import { EPISODE_GAP_HOURS, NAME_BIT } from '../../query/product/sealed-units.ts'
import { SEALED_FORMAT } from '../../query/sealed.ts'
import { attributeFragments } from '../../query/sealed-live.ts'
import { postingsFragments } from '../../query/sealed-filters.ts'
import { SEEN_DAYS } from '../../query/sealed-pages.ts'
import { renderSql } from '../../query/sql-templates.ts'
import { clickhouseInstant } from '../../query/time-range.ts'
import { readInsertCounts } from '../planning-reads.ts'

export interface SealOptions {
  runner: QueryRunner
  logger: Logger
  /** C, the instant the build seals the history before. */
  closedAt: DateTime
  /** max_execution_time of each build statement. */
  timeoutS: number
}

/** Inserts are counted from this long before a build: older ones committed long before it read. */
const INSERTS_MARGIN_HOURS = 24

/**
 * A step's insert as one part, so that a table one step writes needs no compaction: one thread, its
 * rows squashed into one block up to this size (a larger table takes several parts, compacted).
 */
const ONE_PART = 'max_insert_threads = 1, min_insert_block_size_rows = 0, min_insert_block_size_bytes = 2147483648'

/**
 * Each join as written, its right side the hash table. The planner would otherwise swap the sides by
 * its row estimates, which are wrong on filtered and FINAL reads: on 100M (p001) it put L's 4.4M
 * sessions with every attribute in the hash table, estimated at 0.29M against the 1.9M rows of
 * sealed_visitors (the sessions step 56 s CPU and +3.2 GB, as written 34 s and +2.1 GB), and the
 * events in those of event halves, postings and profiles (29, 21, 19 s CPU; as written 6, 14, 7).
 */
const WRITTEN_JOINS = 'query_plan_join_swap_table = false'

/**
 * The slots of sealed_build_rollups (every dimension) and sealed_build_dimension_revenue (those a
 * filter can name): a grouping set per dimension, and which one a row is of. A set with a prefix
 * also holds the prefix's own dimension's column (a region's country), so those are told first, by
 * the column only they group (`grouping` is 0 for a column in the row's set).
 */
const groupingFragments = (dimensions: readonly Dimension[]) => {
  const byColumn = (pick: (d: Dimension) => string) => `multiIf(${dimensions.map((d) => `dimension = '${d.name}', toString(${pick(d)})`).join(', ')}, '')`
  const told = [...dimensions.filter((d) => d.prefix), ...dimensions.filter((d) => !d.prefix)]
  return {
    grouping_sets: dimensions.map((d) => `(day, ${d.prefix ? `${d.prefix}, ` : ''}${d.column})`).join(', '),
    dimension_of: `multiIf(${told.map((d) => `grouping(${d.column}) = 0, '${d.name}'`).join(', ')}, '')`,
    prefix_of: byColumn((d) => d.prefix ?? "''"),
    value_of: byColumn((d) => d.column),
  }
}

/** The page tables, in order: the held-out sessions first, which the others leave out. */
const PAGE_STEPS = ['held', 'keys', 'views', 'days', 'entries', 'blocks', 'countries'].map((part) => `sealed_build_page_${part}`)

const instant = (text: string) => DateTime.fromSQL(text, { zone: 'UTC' })

/** A build's statements, in the order sealProject runs them, each with what its log line adds (a step's own values). */
export function buildSteps(params: { project: string; version: number; closed: string }, timeoutS: number): { stmt: Statement; detail: Record<string, unknown> }[] {
  const step = (name: string, fragments: Record<string, string> = {}, extra: Record<string, unknown> = {}) => ({
    stmt: { name, sql: `${renderSql(name, { ...attributeFragments, ...fragments })}\nSETTINGS max_execution_time = ${timeoutS}, ${ONE_PART}, ${WRITTEN_JOINS}`, params: { ...params, ...extra } },
    detail: extra,
  })
  return [
    step('sealed_build_visitors'),
    step('sealed_build_event_visitors'),
    step('sealed_build_sessions'),
    step('sealed_build_session_keys'),
    step('sealed_build_event_postings', postingsFragments),
    step('sealed_build_session_days'),
    step('sealed_build_revenue_events'),
    step('sealed_build_page_revenue'),
    step('sealed_build_dimension_revenue', groupingFragments(DIMENSIONS.filter((d) => d.filterable))),
    step('sealed_build_rollups', groupingFragments(DIMENSIONS)),
    // Blocks before the totals' days: the dimensions' days are the only rows of 24 hours then.
    step('sealed_build_merged', {}, { from_hours: 24, to_hours: 192 }),
    step('sealed_build_rollup_last'),
    step('sealed_build_rollup_last_blocks'),
    step('sealed_build_totals'),
    step('sealed_build_merged', {}, { from_hours: 1, to_hours: 24 }),
    step('sealed_build_event_halves'),
    step('sealed_build_events'),
    step('sealed_build_event_days'),
    step('sealed_build_profiles'),
    step('sealed_build_profile_days'),
    step('sealed_build_session_events'),
    step('sealed_build_device_profiles'),
    step('sealed_build_person_events', { name_bit: NAME_BIT }, { gap_ms: EPISODE_GAP_HOURS * 3_600_000 }),
    ...PAGE_STEPS.map((name) => step(name)),
    step('sealed_build_page_ends', {}, { seen_days: SEEN_DAYS }),
  ]
}

/**
 * Seals one project's history before C: numbers its new visitors (each session's, then every
 * event's profile), writes its sessions (those that go on after C as `held` parts), the sessions of
 * each day's event names, origins and paths, each day's sessions as arrays (filters), the revenue events of the sessions and of the pages, and
 * the sessions' revenue by day and value (filters), then
 * each dimension's daily rollup and their 8-day blocks, the totals and the event rollups by half
 * hour, by hour and by day, the hourly and daily sets of profiles, the sessions' event arrays, each profile's episodes
 * and each device's identified events (product analytics), and the page tables (/pages). Kept only
 * if no insert reached before C while it read, then registered; the builds before the one it
 * replaces are dropped (the one it replaces is left to the caller: requests planned with it may still
 * be reading). Returns its version and how long it took, or undefined when the build was not kept.
 */
export async function sealProject(projectId: string, o: SealOptions): Promise<{ version: number; ms: number } | undefined> {
  const { runner, logger } = o
  const started = performance.now()
  const read = { timeoutS: o.timeoutS }
  const [clock] = await runner.rows<{ now: string; previous: number }>(
    { name: 'sealed_clock', sql: renderSql('sealed_clock'), params: { project: projectId } },
    read,
  )
  const built = instant(clock!.now)
  const version = built.toMillis()
  const since = built.minus({ hours: INSERTS_MARGIN_HOURS })
  const params = { project: projectId, version, closed: clickhouseInstant(o.closedAt) }
  const countInserts = async () => {
    const [count] = await readInsertCounts(runner, [{ projectId, closedAt: o.closedAt, since }], read)
    return count!.closed_inserts
  }
  // Each statement's time at debug level: where a build's minutes go, on the data it ran on.
  const command = async (stmt: Statement, detail: Record<string, unknown> = {}) => {
    const t = performance.now()
    await runner.command(stmt, { background: 'build' })
    logger.debug({ project: projectId, step: stmt.name, ...detail, ms: Math.round(performance.now() - t) }, 'sealed build step')
  }
  const drop = (v: number) => dropBuild(runner, projectId, v, o.timeoutS)
  const before = await countInserts()
  try {
    for (const { stmt, detail } of buildSteps(params, o.timeoutS)) await command(stmt, detail)
  } catch (err) {
    await drop(version).catch(() => {})
    throw err
  }
  // An insert reaching before C while the build read may be half in it: not kept.
  if ((await countInserts()) !== before) {
    await drop(version)
    logger.info({ project: projectId }, 'sealed history: events before C changed while building; not kept')
    return undefined
  }
  for (const table of await tablesToCompact(runner, projectId, version, o.timeoutS)) {
    await command({ name: 'versioned_compact', sql: renderSql('versioned_compact', { table }), params: { project: projectId, version } }, { table })
  }
  const ms = Math.round(performance.now() - started)
  await command({
    name: 'sealed_register',
    sql: renderSql('sealed_register'),
    params: { ...params, format: SEALED_FORMAT, built: clickhouseInstant(built), since: clickhouseInstant(since), inserts: before, build_ms: ms, recent_days: SEEN_DAYS },
  })
  if (clock!.previous > 0) await dropBuildsBefore(runner, projectId, clock!.previous, o.timeoutS)
  logger.info({ project: projectId, closedAt: o.closedAt.toISO(), ms }, 'sealed history built')
  return { version, ms }
}

/** The sealed tables in which a build has more than one part, to compact into one: a build leaves each table one part. */
export async function tablesToCompact(runner: QueryRunner, projectId: string, version: number, timeoutS: number): Promise<string[]> {
  const rows = await runner.rows<{ name: string }>(
    { name: 'versioned_parts', sql: renderSql('versioned_parts'), params: { project: projectId, version } },
    { timeoutS },
  )
  return rows.map((r) => r.name)
}

/** Drops the project's builds stored before version `keep`: registered ones, and any a build left unfinished. */
export async function dropBuildsBefore(runner: QueryRunner, projectId: string, keep: number, timeoutS: number): Promise<void> {
  const older = await runner.rows<{ version: number }>(
    { name: 'sealed_versions', sql: renderSql('sealed_versions'), params: { project: projectId, keep } },
    { timeoutS },
  )
  for (const { version } of older) await dropBuild(runner, projectId, version, timeoutS)
}

/**
 * One drop per sealed table that holds a part of the build, in the builds' lane like the build's own
 * statements: on the requests' line each drop took a turn from the requests (M: 338 ms of drops, the
 * reads meanwhile 10.7 ms at p50 against 6.6 with the drops in the lane; drops-lane.ts).
 */
async function dropBuild(runner: QueryRunner, projectId: string, version: number, timeoutS: number): Promise<void> {
  const build = { project: projectId, version }
  const tables = await runner.rows<{ name: string }>({ name: 'sealed_build_tables', sql: renderSql('sealed_build_tables'), params: build }, { timeoutS })
  for (const { name: table } of tables) {
    await runner.command({ name: 'versioned_drop', sql: renderSql('versioned_drop', { table }), params: build }, { background: 'build' })
  }
}
