import type { DateTime } from 'luxon'
import type { Statement } from '../clickhouse/run.ts'
import type { ChartSeriesRequest, Segment } from './charts.ts'
import { bucketExpression, windowPlaceholders } from './insights.ts'
import { HOUR_MS, onUtcHour, rollupRowsParams, wholeDays, wholePeriods, type SealedBuild } from './sealed.ts'
import { renderSql } from './sql-templates.ts'

/**
 * What a series reads from the sealed event rollups, per segment: the value of a bucket from its
 * events and profiles, and whether events without a profile take part. Other segments (sessions,
 * one event per user, properties) need the events themselves.
 */
const SEALED_SEGMENTS: Partial<Record<Segment, { value: string; profiledOnly: boolean }>> = {
  event: { value: 'events', profiledOnly: false },
  user: { value: 'profiles', profiledOnly: true },
  user_average: { value: 'events / profiles', profiledOnly: true },
}

/**
 * Whether the hourly event rollups can stand for a series: a segment they hold, no filter, no
 * breakdown, and every bucket of the window (and of the previous one) starting on a UTC hour, so
 * that each sealed hour falls in one bucket. `bucketStarts` are both periods' buckets.
 */
export function sealedChartAnswers(req: ChartSeriesRequest, bucketStarts: readonly DateTime[]): boolean {
  const earliest = req.previous?.start ?? req.range.start
  return (
    SEALED_SEGMENTS[req.segment] !== undefined &&
    req.filters.length === 0 &&
    req.breakdowns.length === 0 &&
    req.interval !== 'minute' &&
    onUtcHour(earliest) &&
    onUtcHour(req.range.start) &&
    bucketStarts.every((b) => b <= earliest || onUtcHour(b))
  )
}

/**
 * One series from the sealed history (sql/queries/export_charts_sealed.sql): the same rows as
 * chartSeriesStatement for the requests sealedChartAnswers accepts, with the same `bucketStarts`.
 * Whole UTC hours before C come from the event rollups (whole UTC days of them as days where the
 * buckets allow), the rest of the window from the events, whose profiles are numbered from the
 * snapshot of the events after C where the planner wrote one and they all lie from C on.
 */
export function sealedChartSeriesStatement(req: ChartSeriesRequest, bucketStarts: readonly DateTime[], build: SealedBuild): Statement {
  const segment = SEALED_SEGMENTS[req.segment]
  if (!segment) throw new Error(`segment ${req.segment} is not sealed`)
  const earliest = req.previous?.start ?? req.range.start
  const sealedEnd = req.range.end < build.closedAt ? req.range.end : build.closedAt
  const hours = wholePeriods(earliest, sealedEnd, HOUR_MS)
  const days = wholeDays(req.range.start, bucketStarts, hours, build.closedAt)
  const snapshot = build.liveStamp !== undefined && +hours.to >= +build.closedAt
  const { params } = windowPlaceholders(req.projectId, req.range, earliest)
  Object.assign(params.values, {
    version: build.version,
    ...rollupRowsParams(hours, days, [1, 24]),
    ...(snapshot ? { stamp: build.liveStamp } : {}),
  })
  const conditions: string[] = []
  if (req.name !== '*') conditions.push(`name = ${params.add(req.name, 'String')}`)
  const rollupConditions = [...conditions, ...(segment.profiledOnly ? ['has_profile'] : [])]
  const eventConditions = [...conditions, ...(segment.profiledOnly ? ["profile_id != ''"] : [])]
  const tz = params.add(req.range.timezone, 'String')
  return {
    name: `export_charts_sealed:${req.segment}`,
    sql: renderSql('export_charts_sealed', {
      period: 'hour',
      bucket: bucketExpression(req.interval, tz),
      rollup_conditions: rollupConditions.map((c) => ` AND ${c}`).join(''),
      event_conditions: eventConditions.map((c) => ` AND ${c}`).join(''),
      value: segment.value,
      profile_numbers: renderSql(snapshot ? '_chart_profile_numbers_snapshot' : '_chart_profile_numbers'),
    }),
    params: params.values,
  }
}
