import { DateTime } from 'luxon'
import type { Statement } from '../clickhouse/run.ts'
import type { Dimension } from './dimensions.ts'
import { UNINDEXED_SETS } from './filters.ts'
import { windowPlaceholders, type PageRequest } from './insights.ts'
import { breakdownVisitors } from './sealed-breakdown-visitors.ts'
import { filteredRows, sealedSessionFilters } from './sealed-filters.ts'
import { liveRows, liveSource } from './sealed-live.ts'
import type { PostingsChoice } from './sealed-postings.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant, type TimeRange } from './time-range.ts'

/**
 * A build of a project's sealed history (sql/schema/012_sealed.sql): its sessions before C in
 * time-sorted rows, rollups per period, and dense visitor numbers. The statements here are pure;
 * src/services/sealed decides when to build and whether a build answers a request.
 */
export interface SealedBuild {
  version: number
  /** C: the build holds the sessions' events before it. */
  closedAt: DateTime
  /** The earliest start of a session that spanned C when built (C when none did). */
  heldFrom: DateTime
  /** The longest session sealed whole, in ms: a session overlapping a window began at most this long before it. */
  longestMs: number
  /** What tells that an insert reached before C since the build. */
  insertsSince: DateTime
  inserts: number
  /** The sessions the page tables hold out (128-bit keys in decimal), read whole by /pages, and their first event (C when none). */
  pageHeld: string[]
  pageHeldFrom: DateTime
  /** The first start and the last end of the `linked` and `twofold` episodes (funnels by person), none when there are none. */
  personTwofoldLinked?: Span
  /** The sessions sealed that started in the SEEN_DAYS before C. */
  recentSessions: number
  /** The live sessions as written for the events after C as they are now, when they were (sealed_live; or the profiles' part). */
  liveStamp?: number
  /** What /pages adds after C as written for the events after C as they are now, when it was (sealed_live_pages). */
  pagesStamp?: number
  /** The events after C as they are now with their profiles' numbers, when they were written (sealed_live_events). */
  eventsStamp?: number
  /** What the people held by the events after C need as it is now, when it was written (sealed_live_held). */
  heldStamp?: number
  /** The live visitors' last sealed day per value as written for the events after C as they are now (sealed_live_seen). */
  seenStamp?: number
  /** Set when the stamps are of the events after C as they were at this instant, not now (SealedHistoryOptions.liveLagMs). */
  liveAsOf?: DateTime
}

/** An hour becomes C once it is this old: sessions open across it have mostly ended. */
const SETTLE_HOURS = 1

/** C for a build made now: the newest start of a UTC hour at least SETTLE_HOURS old. */
export function newestClosing(now: DateTime): DateTime {
  return now.toUTC().minus({ hours: SETTLE_HOURS }).startOf('hour')
}

export const DAY_MS = 86_400_000
export const HOUR_MS = 3_600_000
/** Whether an instant starts a UTC hour, where the hourly rollups can start adding whole periods. */
export const onUtcHour = (t: DateTime) => t.toMillis() % HOUR_MS === 0
/** The rollups' blocks of days (sql/queries/sealed_build_merged.sql), aligned on the epoch's days. */
export const BLOCK_MS = 8 * DAY_MS

/** [from, to): the whole periods of `unit` ms inside [start, end), or an empty span at start. */
export function wholePeriods(start: DateTime, end: DateTime, unit: number): { from: DateTime; to: DateTime } {
  const from = Math.ceil(start.toMillis() / unit) * unit
  const to = Math.floor(end.toMillis() / unit) * unit
  if (from >= to) return { from: start, to: start }
  return { from: DateTime.fromMillis(from, { zone: 'UTC' }), to: DateTime.fromMillis(to, { zone: 'UTC' }) }
}

export const earlier = (a: DateTime, b: DateTime) => (a < b ? a : b)

/**
 * The sealed hours [from, to) that a bucket or the current window starts inside (a zone offset by
 * 30 or 45 minutes, ISO instants off the hour), as ClickHouse DateTime text: their events fall in
 * two buckets or periods, so a statement reads them from the events or the sealed sessions instead
 * of the rollups.
 */
export function splitHours(splits: readonly DateTime[], hours: { from: DateTime; to: DateTime }): string[] {
  const inside = splits.filter((t) => t > hours.from && t < hours.to && !onUtcHour(t))
  return [...new Set(inside.map((t) => t.toUTC().startOf('hour').toFormat('yyyy-LL-dd HH:mm:ss')))].sort()
}

/** The placeholder of splitHours' hours. */
export const HOLES = "{holes:Array(DateTime('UTC'))}"

/**
 * The conditions of split hours for a statement's slots, none without any: `rows` adds the hours to
 * a read of the events or the sealed sessions by `created_at`, `periods(column)` takes them out of
 * the rollups' rows.
 */
export const holeConditions = (holes: readonly string[]) => ({
  rows: holes.length > 0 ? ` OR toStartOfHour(created_at) IN ${HOLES}` : '',
  periods: (column: string) => (holes.length > 0 ? ` AND ${column} NOT IN ${HOLES}` : ''),
})

type Span = { from: DateTime; to: DateTime }

/**
 * The parameters of _sealed_rollup_rows.sql: the rollup rows standing for `rollup`, rows of `long`
 * hours inside `whole` and of `short` hours around it.
 */
export const rollupRowsParams = (rollup: Span, whole: Span, [short, long]: readonly [number, number]) => ({
  rollup_from: clickhouseInstant(rollup.from),
  rollup_to: clickhouseInstant(rollup.to),
  long_from: clickhouseInstant(whole.from),
  long_to: clickhouseInstant(whole.to),
  short_hours: short,
  long_hours: long,
})

export function sealedPlaceholders(projectId: string, range: TimeRange, build: SealedBuild, earliest: DateTime, rollup: Span, whole: Span, hours: readonly [number, number]) {
  const { params, ctx } = windowPlaceholders(projectId, range, earliest)
  Object.assign(params.values, {
    version: build.version,
    closed: clickhouseInstant(build.closedAt),
    held_from: clickhouseInstant(build.heldFrom),
    ...(build.liveStamp === undefined ? {} : { stamp: build.liveStamp }),
    ...rollupRowsParams(rollup, whole, hours),
  })
  return { params, ctx }
}

const ceilTo = (t: DateTime, unit: number) => DateTime.fromMillis(Math.ceil(t.toMillis() / unit) * unit, { zone: 'UTC' })

/**
 * The whole periods of `unit` ms inside [start, end) that a build's rows answer. The rows of C's own
 * period hold only what was sealed before C, so a span that reaches C takes that period whole.
 */
export const sealedPeriods = (start: DateTime, end: DateTime, unit: number, closedAt: DateTime) =>
  wholePeriods(start, +end >= +closedAt ? ceilTo(closedAt, unit) : end, unit)

/**
 * A breakdown from the sealed history. Whole UTC days before C come from the rollups (whole 8-day
 * blocks of them as blocks) unless the request filters on anything but the dimension's own value
 * (the rollups hold no other filtered sums); the rest of the window before C from the sealed
 * sessions, and C on from the live sessions. The rollup rows of C's own day and block hold only what
 * was sealed before C, so a window that reaches C takes them whole, and a window aligned on UTC days
 * reads no sealed session at all.
 */
export function sealedBreakdownStatement(dimension: Dimension, req: PageRequest, build: SealedBuild, postings?: PostingsChoice): Statement {
  const rollups = filteredRows(dimension, req.filters, 'sealed_rollups')
  const rollup = req.filters.length > 0 && !rollups
    ? { from: req.range.start, to: req.range.start }
    : sealedPeriods(req.range.start, req.range.end, DAY_MS, build.closedAt)
  const blocks = sealedPeriods(rollup.from, rollup.to, BLOCK_MS, build.closedAt)
  const { params, ctx } = sealedPlaceholders(req.projectId, req.range, build, req.range.start, rollup, blocks, [24, 192])
  Object.assign(params.values, { dimension: dimension.name, limit: req.limit, offset: req.offset })
  const filters = sealedSessionFilters(req.filters, params, ctx, postings)
  const parts = {
    column: dimension.column,
    prefix_column: dimension.prefix ?? "''",
    session_filters: filters.sealed,
    live_filters: filters.live,
  }
  const visitors = breakdownVisitors(dimension, req, build, rollup)
  Object.assign(params.values, visitors.params)
  const sealedSessions = +rollup.from > +req.range.start || +rollup.to < +earlier(req.range.end, build.closedAt)
  const liveSessions = req.range.end > build.heldFrom
  return {
    name: `insights_breakdown_sealed:${dimension.name}`,
    sql: renderSql('insights_breakdown_sealed', {
      period: 'period',
      live: liveSource(build),
      prefix: dimension.prefix ? "nullIf(prefix_value, '')" : 'NULL',
      ...parts,
      ...visitors.fragments,
      rollups: rollups ?? 'sealed_rollups',
      rollup_filters: rollups ? filters.sealed : '',
      sessions: sealedSessions ? renderSql('_sealed_breakdown_sessions', parts) : '',
      live_part: liveSessions ? renderSql('_sealed_breakdown_live', { ...parts, ...liveRows(build), live_visitors: visitors.fragments.live_visitors }) : '',
    }),
    params: params.values,
    ...(req.filters.length > 0 ? { settings: UNINDEXED_SETS } : {}),
  }
}

/**
 * The whole UTC days among a window's sealed hours whose day rows can stand for their hours: none
 * unless every bucket, and the current window (`start`), starts on a UTC midnight within them.
 * C's day row holds only what was sealed before C, so hours that reach C take it whole.
 */
export function wholeDays(start: DateTime, bucketStarts: readonly DateTime[], hours: { from: DateTime; to: DateTime }, closedAt: DateTime) {
  const days = sealedPeriods(hours.from, hours.to, DAY_MS, closedAt)
  const inside = (t: DateTime) => t > days.from && t < days.to
  const splits = [...bucketStarts, start].filter(inside)
  return splits.every((t) => t.toMillis() % DAY_MS === 0) ? days : { from: hours.from, to: hours.from }
}

const instant = (text: string) => DateTime.fromSQL(text, { zone: 'UTC' })

/** One row of sql/queries/sealed_latest.sql. */
export interface SealedLatestRow {
  project_id: string
  version: number
  closed_at: string
  held_from: string
  longest_ms: number
  built_at: string
  inserts_since: string
  inserts: number
  page_held: string[]
  page_held_from: string
  person_twofold_linked: string[]
  sessions_recent: number
}

/**
 * What a build holds (sealed_builds.format): raised when a build gains a table that requests read,
 * so that builds made before it answer nothing and are replaced. 1: the hourly event rollups; 2: the
 * hourly identified profiles (020, product analytics); 3: each session's events as arrays (021,
 * funnels and the user flow), and every profile and the identified ones by hour and UTC day (022,
 * retention, cohorts, engagement and active users); 4: the page tables (023, /pages); 5: whose
 * events each row of session arrays holds, and rows per person where sessions do not tell (025,
 * funnels by person); 6: each session's number, and the sessions of each day's distinct event names, origins
 * and paths (027, event filters); 7: the revenue events of the sessions sealed whole (028, filtered /metrics);
 * 8: page views numbered by their session's sealed_sessions.sno (/pages filtered by session attributes);
 * 9: the totals by UTC day (/metrics); 10: the event rollups by UTC day (029, charts); 11: each
 * profile's episodes and each device's identified events instead of 025's rows per person (030,
 * funnels by person); 12: the revenue events before C with their page (032, /metrics filtered on the page); 13: each page's sessions and
 * visitors counted on the day of their last view (034, /pages over whole days to C); 15 (14 was
 * never released): the sessions' revenue by dimension (039, /metrics filtered on one dimension), visitors' keys and entry and exit times on
 * held sessions alone, page keys only of the sessions that may still cross C, no event counts (037), the event
 * rollups by UTC half hour (040) and the pages' last-view numbers of the last 31 days (038); 17 (16 was
 * never released): the episodes masked by their names and sorted by the mask (042, funnels by person),
 * each UTC day's sessions as arrays (044, /metrics filtered on events) and the sealed sessions without
 * their id (045); 18: /pages' day rows by country (048, /pages filtered on the country); 19: the span
 * of the linked and twofold episodes in the build's row (046, funnels by person from the held people's
 * snapshot) and each day's sessions numbered in key order; 20: each dimension's visitors counted on
 * the day of their last sealed session (047, breakdowns over whole days to C); 21: the keys of the
 * sessions sealed whole, sorted (054, the crossing check).
 */
export const SEALED_FORMAT = 21

export const sealedLatestStatement = (projectIds: readonly string[]): Statement => ({
  name: 'sealed_latest',
  sql: renderSql('sealed_latest'),
  params: { latest_projects: projectIds, format: SEALED_FORMAT },
})

export function readSealedLatest(row: SealedLatestRow | undefined): { build: SealedBuild; builtAt: DateTime } | undefined {
  if (!row) return undefined
  return {
    builtAt: instant(row.built_at),
    build: {
      version: row.version,
      closedAt: instant(row.closed_at),
      heldFrom: instant(row.held_from),
      longestMs: row.longest_ms,
      insertsSince: instant(row.inserts_since),
      inserts: row.inserts,
      pageHeld: row.page_held,
      pageHeldFrom: instant(row.page_held_from),
      recentSessions: row.sessions_recent,
      ...(row.person_twofold_linked.length === 2 ? { personTwofoldLinked: { from: instant(row.person_twofold_linked[0]!), to: instant(row.person_twofold_linked[1]!) } } : {}),
    },
  }
}
