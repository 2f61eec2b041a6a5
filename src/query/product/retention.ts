import { DateTime } from 'luxon'
import type { Statement } from '../../clickhouse/run.ts'
import { invalidParameters } from '../errors.ts'
import { compileFilters, type Filter } from '../filters.ts'
import { windowPlaceholders } from '../insights.ts'
import { renderSql } from '../sql-templates.ts'
import { clickhouseInstant, type TimeRange } from '../time-range.ts'

export interface RetentionRequest {
  projectId: string
  range: TimeRange
  filters: readonly Filter[]
}

/** Weeks start on Monday, as Quarry's week buckets do everywhere. */
const weekStart = (t: DateTime) => t.startOf('week')

export function retentionStatement(req: RetentionRequest): Statement {
  const { params, ctx } = windowPlaceholders(req.projectId, req.range)
  params.values.tz = req.range.timezone
  return {
    name: 'insights_retention',
    sql: renderSql('insights_retention', { filters: compileFilters(req.filters, 'pageViews', params, ctx) }),
    params: params.values,
  }
}

export interface RetentionRow {
  date: string
  active_users: number
  retained_users: number
}

export const assembleRetention = (rows: readonly RetentionRow[]) =>
  rows.map((r) => ({ ...r, retention: r.active_users === 0 ? 0 : (100 * r.retained_users) / r.active_users }))

/** The cohort matrix's default window: the 12 weeks before the current one, and the current one. */
export const COHORT_WEEKS = 12
/** More columns than two years of weeks is a window to narrow. */
const MAX_COHORT_COLUMNS = 105

export const defaultCohortRange = (now: Date, timezone: string): TimeRange => {
  const local = DateTime.fromJSDate(now, { zone: timezone })
  return { start: weekStart(local).minus({ weeks: COHORT_WEEKS }), end: local.startOf('day').plus({ days: 1 }), timezone }
}

/** Columns of the matrix: one per week from the window's first week to its last. */
export function cohortColumns(range: TimeRange): number {
  const first = weekStart(range.start.setZone(range.timezone))
  const last = weekStart(range.end.minus({ milliseconds: 1 }).setZone(range.timezone))
  const columns = Math.round(last.diff(first, 'weeks').weeks) + 1
  if (columns > MAX_COHORT_COLUMNS) throw invalidParameters([{ path: 'startDate', message: `the cohort window may span at most ${MAX_COHORT_COLUMNS} weeks` }])
  return columns
}

export function cohortStatement(req: RetentionRequest, columns: number): Statement {
  const { params, ctx } = windowPlaceholders(req.projectId, req.range)
  // A cohort's later weeks may lie after the window: activity is read for as many weeks again.
  Object.assign(params.values, { tz: req.range.timezone, columns, activity_to: clickhouseInstant(req.range.end.plus({ weeks: columns })) })
  return {
    name: 'insights_retention_cohort',
    sql: renderSql('insights_retention_cohort', { filters: compileFilters(req.filters, 'pageViews', params, { ...ctx, to: "{activity_to:DateTime64(3, 'UTC')}" }) }),
    params: params.values,
  }
}

export interface CohortRow {
  cohort_interval: string
  size: number
  retained: number[]
}

const round2 = (x: number) => Math.round(x * 100) / 100

/**
 * OpenPanel's matrix: a row per cohort (percentages as fractions) after a "Weighted Average" row
 * whose column k pools the cohorts old enough to have a week k (counted to the current week).
 */
export function assembleCohorts(rows: readonly CohortRow[], columns: number, now: Date, timezone: string) {
  if (rows.length === 0) return []
  const current = weekStart(DateTime.fromJSDate(now, { zone: timezone }))
  const cohorts = rows.map((r) => ({
    cohort_interval: r.cohort_interval,
    sum: Number(r.size),
    values: r.retained.map(Number),
    percentages: r.retained.map((v) => (Number(r.size) === 0 ? 0 : round2(Number(v) / Number(r.size)))),
    age: Math.round(current.diff(DateTime.fromISO(r.cohort_interval, { zone: timezone }), 'weeks').weeks),
  }))
  const representative = Math.round(cohorts.reduce((s, c) => s + c.sum, 0) / cohorts.length)
  const rates = Array.from({ length: columns }, (_, k) => {
    const mature = cohorts.filter((c) => c.age >= k)
    const size = mature.reduce((s, c) => s + c.sum, 0)
    return size === 0 ? 0 : mature.reduce((s, c) => s + c.values[k]!, 0) / size
  })
  const average = {
    cohort_interval: 'Weighted Average',
    sum: representative,
    values: rates.map((r) => Math.round(r * representative)),
    percentages: rates.map(round2),
  }
  return [average, ...cohorts.map(({ age: _age, ...c }) => c)]
}

export interface EngagementRequest {
  projectId: string
  timezone: string
  now: Date
}

export const engagementStatement = (req: EngagementRequest): Statement => ({
  name: 'insights_engagement',
  sql: renderSql('insights_engagement'),
  params: { project: req.projectId, tz: req.timezone, today: DateTime.fromJSDate(req.now, { zone: req.timezone }).toISODate() },
})

/** OpenPanel's buckets of days since last seen, upper bounds inclusive (the future counts as active). */
const ENGAGEMENT_BUCKETS = [
  ['active_last_7_days', 7],
  ['active_8_to_14_days', 14],
  ['active_15_to_30_days', 30],
  ['inactive_31_to_60_days', 60],
  ['churned_60_plus_days', Infinity],
] as const

export function assembleEngagement(rows: readonly { days: number; users: number }[]) {
  const distribution = rows.map((r) => ({ days: Number(r.days), users: Number(r.users) }))
  const counts = ENGAGEMENT_BUCKETS.map(([name, upTo], i) => {
    const above = i === 0 ? -Infinity : ENGAGEMENT_BUCKETS[i - 1]![1]
    return [name, distribution.filter((r) => r.days > above && r.days <= upTo).reduce((s, r) => s + r.users, 0)] as const
  })
  const summary = Object.fromEntries(counts) as Record<(typeof ENGAGEMENT_BUCKETS)[number][0], number>
  return { summary: { total_identified_users: counts.reduce((s, [, n]) => s + n, 0), ...summary }, distribution }
}
