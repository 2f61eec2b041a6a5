import type { DateTime, DurationLikeObject, DurationUnit } from 'luxon'
import type { Statement } from '../clickhouse/run.ts'
import { invalidParameters } from './errors.ts'
import { eventColumnNames, findEventColumn, UTM_FIELDS, utmPropertyKey } from './event-columns.ts'
import { compileFilters, type Filter } from './filters.ts'
import { GROUP_ID, groupBreakdownExpression, groupJoin, isGroupName } from './group-filters.ts'
import { bucketExpression } from './insights.ts'
import { SqlParams } from './sql-params.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant, type Interval, type TimeRange } from './time-range.ts'

export const SEGMENTS = [
  'event',
  'user',
  'session',
  'user_average',
  'one_event_per_user',
  'property_sum',
  'property_average',
  'property_min',
  'property_max',
  'group',
] as const
export type Segment = (typeof SEGMENTS)[number]

export const PROPERTY_SEGMENTS: ReadonlySet<Segment> = new Set(['property_sum', 'property_average', 'property_min', 'property_max'])

export const MAX_SERIES = 10
export const MAX_BREAKDOWNS = 3
export const MAX_BREAKDOWN_SERIES = 1000
/** As OpenPanel, which keeps every group, up to the 1000 rows its lists answer. */
export const DEFAULT_BREAKDOWN_SERIES = MAX_BREAKDOWN_SERIES
/**
 * The points (groups x buckets, over all series) one chart may hold: 10 series of 1000 groups of
 * 10,000 buckets would be 100M points, gigabytes of objects. 500,000 is 1000 groups of 500 buckets,
 * or every country hourly for 80 days, and about 150 MB while it is built.
 */
export const MAX_CHART_POINTS = 500_000
/**
 * What the engine may answer for one series (a row per non-empty point of either period, and two
 * totals per group): a breakdown statement stops reading there, so the check after it runs
 * (chart-series.ts) never holds more than this in memory.
 */
export const MAX_CHART_ROWS = 2 * MAX_CHART_POINTS + 2 * MAX_BREAKDOWN_SERIES

/** The numeric events columns a property segment may aggregate directly. */
export const NUMERIC_PROPERTY_COLUMNS: readonly string[] = eventColumnNames((c) => c.kind === 'number')

const PROPERTY_PREFIX = 'properties.'
const INSTANT = "DateTime64(3, 'UTC')"

/** Columns that make no sense as a breakdown: one value per project, or one per event. */
const NOT_BREAKDOWNS = new Set(eventColumnNames((c) => !c.breakdown))

const propertyKey = (name: string): string | undefined =>
  name.startsWith(PROPERTY_PREFIX) && name.length > PROPERTY_PREFIX.length ? name.slice(PROPERTY_PREFIX.length) : undefined

/**
 * The SQL of a breakdown, as a String: an events column (or its camelCase alias), a UTM field,
 * or `properties.<key>` (a missing key reads as ''). Undefined when the name is not allowed.
 */
export function breakdownExpression(name: string, params: SqlParams): string | undefined {
  const group = groupBreakdownExpression(name, params)
  if (group !== undefined) return group
  const key = propertyKey(name)
  if (key !== undefined) return `properties[${params.add(key, 'String')}]`
  if ((UTM_FIELDS as readonly string[]).includes(name)) return `properties[${params.add(utmPropertyKey(name), 'String')}]`
  const column = findEventColumn(name)
  if (!column || NOT_BREAKDOWNS.has(column.column)) return undefined
  return column.kind === 'string' ? column.column : `ifNull(toString(${column.column}), '')`
}

/** Whether `name` is a value a property segment can aggregate (checked before any SQL is built). */
export const isPropertyName = (name: string): boolean =>
  propertyKey(name) !== undefined || NUMERIC_PROPERTY_COLUMNS.includes(name) || isGroupName(name)

/**
 * The value a property segment aggregates, as a Nullable(Float64): NULL where the event has no
 * numeric value (a missing key, '', text), and such events are left out of the series.
 */
function measureExpression(property: string, params: SqlParams): string {
  // group.*: the value of each of the event's groups (the statement reads it once per group).
  const group = groupBreakdownExpression(property, params)
  if (group !== undefined) return `toFloat64OrNull(${group})`
  const key = propertyKey(property)
  if (key !== undefined) return `toFloat64OrNull(properties[${params.add(key, 'String')}])`
  if (!NUMERIC_PROPERTY_COLUMNS.includes(property)) {
    throw invalidParameters([{ path: 'series', message: `unknown property "${property}"` }])
  }
  // Allow-listed identifier; longitude and latitude are Nullable(Float32).
  return `toFloat64(${property})`
}

/** The per-bucket aggregate of each segment over the rows the statement keeps. */
const SEGMENT_VALUE: Record<Segment, string> = {
  event: 'count()',
  user: 'uniqExact(profile_id)',
  session: 'uniqExact(session_id)',
  user_average: 'count() / uniqExact(profile_id)',
  // After {{dedupe}} every profile has one row per period: the bucket and breakdown of its latest event.
  one_event_per_user: 'count()',
  property_sum: 'sum(measure)',
  property_average: 'avg(measure)',
  property_min: 'min(measure)',
  property_max: 'max(measure)',
  // Distinct group ids among the events (each event once per group it carries).
  group: 'uniqExact(group_id)',
}

export interface ChartSeriesRequest {
  projectId: string
  range: TimeRange
  /** When set, period 1 of the result is this window (it must end where `range` starts). */
  previous?: TimeRange
  interval: Interval
  /** An event name, or '*' for every event. */
  name: string
  filters: readonly Filter[]
  segment: Segment
  property?: string
  /** Breakdown names, at most MAX_BREAKDOWNS, already checked with breakdownExpression. */
  breakdowns: readonly string[]
  /** How many breakdown groups to keep (the top ones by sum). */
  limit: number
  /** Where problems in this series are reported (`series.2`). */
  path: string
}

/** One row of sql/queries/export_charts.sql. */
export interface ChartSeriesRow {
  period: 0 | 1
  bucket: number
  is_total: 0 | 1
  value: number
  profiles: number
  l0: string
  l1: string
  l2: string
}

/** One series' statement: bucket values and totals of the current (and previous) period per breakdown group. */
export function chartSeriesStatement(req: ChartSeriesRequest): Statement {
  const earliest = req.previous?.start ?? req.range.start
  const params = new SqlParams({
    project: req.projectId,
    from: clickhouseInstant(req.range.start),
    to: clickhouseInstant(req.range.end),
    earliest: clickhouseInstant(earliest),
    limit: req.limit,
  })
  const ctx = { project: '{project:String}', from: `{earliest:${INSTANT}}`, to: `{to:${INSTANT}}` }
  const tz = params.add(req.range.timezone, 'String')

  const labels = [0, 1, 2].map((i) => {
    const name = req.breakdowns[i]
    if (name === undefined) return `'' AS l${i}`
    const expr = breakdownExpression(name, params)
    if (expr === undefined) throw invalidParameters([{ path: `breakdowns.${i}.name`, message: `cannot break down by "${name}"` }])
    return `${expr} AS l${i}`
  })

  const conditions: string[] = []
  if (req.name !== '*') conditions.push(`name = ${params.add(req.name, 'String')}`)
  let measure = 'toFloat64(0)'
  if (PROPERTY_SEGMENTS.has(req.segment)) {
    if (req.property === undefined) throw invalidParameters([{ path: `${req.path}.property`, message: `segment ${req.segment} needs a property` }])
    const expr = measureExpression(req.property, params)
    // Events without a finite numeric value do not take part (the previous `IS NOT NULL` makes assumeNotNull safe).
    conditions.push(`${expr} IS NOT NULL AND isFinite(${expr})`)
    measure = `assumeNotNull(${expr})`
  }
  // An empty profile_id or session_id is no profile or session: those events do not count for the
  // segments that count profiles or sessions (OpenPanel counts '' as one more distinct value).
  if (req.segment === 'user' || req.segment === 'user_average' || req.segment === 'one_event_per_user') {
    conditions.push(`profile_id != ''`)
  }
  if (req.segment === 'session') conditions.push(`session_id != ''`)

  const filters = compileFilters(req.filters, 'events', params, ctx)
  // The group segment, group.* breakdowns and a group.* property read each event once per group
  // (OpenPanel's ARRAY JOIN).
  const byGroup = req.segment === 'group' || req.breakdowns.some(isGroupName) || (PROPERTY_SEGMENTS.has(req.segment) && isGroupName(req.property ?? ''))
  return {
    name: `export_charts:${req.segment}`,
    sql: renderSql('export_charts', {
      bucket: bucketExpression(req.interval, tz),
      labels: labels.join(', '),
      group_join: byGroup ? groupJoin('{project:String}') : '',
      group_id: byGroup ? GROUP_ID : "''",
      measure,
      conditions: conditions.map((c) => ` AND ${c}`).join('') + filters,
      dedupe: req.segment === 'one_event_per_user' ? 'ORDER BY period, profile_id, created_at DESC, id LIMIT 1 BY period, profile_id' : '',
      value: SEGMENT_VALUE[req.segment],
    }),
    params: params.values,
    // 'break' answers the rows read so far (at most a block more): chartSize then refuses the chart.
    settings: { max_result_rows: MAX_CHART_ROWS, result_overflow_mode: 'break' },
  }
}

/** Units a period length is measured in, so that the previous period's buckets line up with the current ones. */
const LENGTH_UNITS: Record<Interval, DurationUnit[]> = {
  minute: ['milliseconds'],
  hour: ['milliseconds'],
  day: ['days', 'hours', 'minutes', 'seconds', 'milliseconds'],
  week: ['days', 'hours', 'minutes', 'seconds', 'milliseconds'],
  month: ['months', 'days', 'hours', 'minutes', 'seconds', 'milliseconds'],
}

/**
 * The period of equal length just before `range`, its length measured in the calendar of the
 * interval: exact time for minute and hour buckets, local days for day and week buckets, months
 * for month buckets. So a 31-day window that crosses a DST change is preceded by 31 local days
 * starting at midnight, not by 31 × 24 hours starting at 23:00, and bucket i of the previous period
 * is the counterpart of bucket i of the current one.
 */
export function chartPreviousRange(range: TimeRange, interval: Interval): TimeRange {
  const start = range.start.setZone(range.timezone)
  const end = range.end.setZone(range.timezone)
  const length: DurationLikeObject = end.diff(start, LENGTH_UNITS[interval]).toObject()
  const previousStart: DateTime = start.minus(length)
  return { start: previousStart, end: range.start, timezone: range.timezone }
}

/** Whether `name` may be a breakdown (see breakdownExpression). */
export const isBreakdownName = (name: string): boolean => breakdownExpression(name, new SqlParams()) !== undefined
