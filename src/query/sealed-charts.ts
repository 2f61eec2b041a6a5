import type { DateTime } from 'luxon'
import type { Statement } from '../clickhouse/run.ts'
import type { ChartSeriesRequest, Segment } from './charts.ts'
import { bucketExpression, windowPlaceholders } from './insights.ts'
import { holeConditions, HOUR_MS, onUtcHour, rollupRowsParams, splitHours, wholeDays, wholePeriods, type SealedBuild } from './sealed.ts'
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
 * breakdown, and buckets no shorter than a UTC hour's that start on one (hours whose buckets split
 * them come from the events: splitHours). `bucketStarts` are both periods' buckets.
 */
export function sealedChartAnswers(req: ChartSeriesRequest, bucketStarts: readonly DateTime[]): boolean {
  const earliest = req.previous?.start ?? req.range.start
  return (
    SEALED_SEGMENTS[req.segment] !== undefined &&
    req.filters.length === 0 &&
    req.breakdowns.length === 0 &&
    req.interval !== 'minute' &&
    (req.interval !== 'hour' || bucketStarts.every((b) => b <= earliest || onUtcHour(b)))
  )
}

/**
 * One series from the sealed history (sql/queries/export_charts_sealed.sql): the same rows as
 * chartSeriesStatement for the requests sealedChartAnswers accepts, with the same `bucketStarts`.
 * Whole UTC hours before C but those its buckets split come from the event rollups (whole UTC days
 * of them as days where the buckets allow), the rest of the window from the events, or from the
 * snapshot of the events after C with their profiles' numbers where the planner wrote one and that
 * rest all lies from C on.
 */
export function sealedChartSeriesStatement(req: ChartSeriesRequest, bucketStarts: readonly DateTime[], build: SealedBuild): Statement {
  const segment = SEALED_SEGMENTS[req.segment]
  if (!segment) throw new Error(`segment ${req.segment} is not sealed`)
  const earliest = req.previous?.start ?? req.range.start
  const sealedEnd = req.range.end < build.closedAt ? req.range.end : build.closedAt
  const hours = wholePeriods(earliest, sealedEnd, HOUR_MS)
  const days = wholeDays(req.range.start, bucketStarts, hours, build.closedAt)
  const holes = splitHours([req.range.start, ...bucketStarts], hours)
  // The snapshot holds only the events from C on.
  const snapshot = build.eventsStamp !== undefined && +hours.to >= +build.closedAt && +hours.from === +earliest && holes.length === 0
  const { params } = windowPlaceholders(req.projectId, req.range, earliest)
  Object.assign(params.values, {
    version: build.version,
    ...rollupRowsParams(hours, days, [1, 24]),
    ...(snapshot ? { events_stamp: build.eventsStamp } : {}),
    ...(holes.length > 0 ? { holes } : {}),
  })
  const conditions: string[] = []
  if (req.name !== '*') conditions.push(`name = ${params.add(req.name, 'String')}`)
  const rollupConditions = [...conditions, ...(segment.profiledOnly ? ['has_profile'] : [])]
  const split = holeConditions(holes)
  const eventConditions = [...conditions, ...(segment.profiledOnly ? [snapshot ? 'vno != 0' : "profile_id != ''"] : [])]
  const outside = { event_conditions: eventConditions.map((c) => ` AND ${c}`).join(''), hole_events: split.rows }
  const tz = params.add(req.range.timezone, 'String')
  return {
    name: `export_charts_sealed:${req.segment}`,
    sql: renderSql('export_charts_sealed', {
      period: 'hour',
      bucket: bucketExpression(req.interval, tz),
      rollup_conditions: rollupConditions.map((c) => ` AND ${c}`).join('') + split.periods('hour'),
      value: segment.value,
      outside: renderSql(snapshot ? '_chart_outside_snapshot' : '_chart_outside_events', outside),
    }),
    params: params.values,
  }
}
