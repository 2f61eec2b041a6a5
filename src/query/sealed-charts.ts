import { DateTime } from 'luxon'
import type { Statement } from '../clickhouse/run.ts'
import type { ChartSeriesRequest, Segment } from './charts.ts'
import { bucketExpression, windowPlaceholders } from './insights.ts'
import { holeConditions, HOUR_MS, rollupRowsParams, splitHours, wholeDays, wholePeriods, type SealedBuild } from './sealed.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant } from './time-range.ts'

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
 * Whether the event rollups can stand for a series: a segment they hold, no filter, no breakdown,
 * and buckets no shorter than an hour's that start on a UTC hour or half hour (hours whose buckets
 * split them elsewhere come from the events: splitHours). `bucketStarts` are both periods' buckets.
 */
export function sealedChartAnswers(req: ChartSeriesRequest, bucketStarts: readonly DateTime[]): boolean {
  const earliest = req.previous?.start ?? req.range.start
  return (
    SEALED_SEGMENTS[req.segment] !== undefined &&
    req.filters.length === 0 &&
    req.breakdowns.length === 0 &&
    req.interval !== 'minute' &&
    (req.interval !== 'hour' || bucketStarts.every((b) => b <= earliest || onHalfHour(b)))
  )
}

const HALF_HOUR_MS = HOUR_MS / 2
const onHalfHour = (t: DateTime) => t.toMillis() % HALF_HOUR_MS === 0
const HALVES = "{halves:Array(DateTime('UTC'))}"
const utcText = (ms: number) => DateTime.fromMillis(ms, { zone: 'UTC' }).toFormat('yyyy-LL-dd HH:mm:ss')

/**
 * The half hours (sealed_event_halves) a chart reads with its whole hours: both halves of each
 * split hour whose splits all fall on its half (a zone offset by half an hour), and the half before
 * and after the whole hours where the window starts or ends with it. `from` and `to` bound what the
 * rollups answer; the events answer the rest and the other split hours (`holes`).
 */
function halfHours(splits: readonly DateTime[], earliest: DateTime, end: DateTime, hours: { from: DateTime; to: DateTime }) {
  const splitInside = (start: number, ms: number) => splits.some((t) => +t > start && +t < start + ms && +t !== start + HALF_HOUR_MS)
  const split = splitHours(splits, hours)
  const holes = split.filter((h) => splitInside(+DateTime.fromSQL(h, { zone: 'UTC' }), HOUR_MS))
  const halved = split.filter((h) => !holes.includes(h)).map((h) => +DateTime.fromSQL(h, { zone: 'UTC' }))
  const whole = +hours.to > +hours.from
  const lead = +hours.from - HALF_HOUR_MS
  const trail = +hours.to
  // Only where they leave no events to read at that end: a half with events beside it saves no read.
  const before = whole && lead === +earliest && !splitInside(lead, HALF_HOUR_MS)
  const after = whole && trail + HALF_HOUR_MS === +end && !splitInside(trail, HALF_HOUR_MS)
  const halves = [...(before ? [lead] : []), ...halved.flatMap((h) => [h, h + HALF_HOUR_MS]), ...(after ? [trail] : [])]
  return {
    from: before ? DateTime.fromMillis(lead, { zone: 'UTC' }) : hours.from,
    to: after ? DateTime.fromMillis(trail + HALF_HOUR_MS, { zone: 'UTC' }) : hours.to,
    holes,
    halves: halves.map(utcText),
  }
}

/**
 * One series from the sealed history (sql/queries/export_charts_sealed.sql): the same rows as
 * chartSeriesStatement for the requests sealedChartAnswers accepts, with the same `bucketStarts`.
 * Whole UTC hours before C but those its buckets split come from the event rollups (whole UTC days
 * of them as days where the buckets allow), halves of hours where the splits fall on them or the
 * window starts or ends on one (halfHours), the rest of the window from the events, or from the
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
  const splits = [req.range.start, ...bucketStarts]
  const { from, to, holes, halves } = halfHours(splits, earliest, sealedEnd, hours)
  // The snapshot holds only the events from C on.
  const snapshot = build.eventsStamp !== undefined && +to >= +build.closedAt && +from === +earliest && holes.length === 0
  const { params } = windowPlaceholders(req.projectId, req.range, earliest)
  Object.assign(params.values, {
    version: build.version,
    ...rollupRowsParams(hours, days, [1, 24]),
    sealed_from: clickhouseInstant(from),
    sealed_to: clickhouseInstant(to),
    ...(snapshot ? { events_stamp: build.eventsStamp } : {}),
    ...(holes.length > 0 ? { holes } : {}),
    ...(halves.length > 0 ? { halves } : {}),
  })
  const conditions: string[] = []
  if (req.name !== '*') conditions.push(`name = ${params.add(req.name, 'String')}`)
  const rollupConditions = [...conditions, ...(segment.profiledOnly ? ['has_profile'] : [])].map((c) => ` AND ${c}`).join('')
  const split = holeConditions(holes)
  const eventConditions = [...conditions, ...(segment.profiledOnly ? [snapshot ? 'vno != 0' : "profile_id != ''"] : [])]
  const outside = { event_conditions: eventConditions.map((c) => ` AND ${c}`).join(''), hole_events: split.rows }
  const tz = params.add(req.range.timezone, 'String')
  const bucket = bucketExpression(req.interval, tz)
  // Nothing outside the rollup rows: no read of the events (nor of every profile's number).
  const rest = +from > +earliest || +to < +req.range.end || holes.length > 0
  return {
    name: `export_charts_sealed:${req.segment}`,
    sql: renderSql('export_charts_sealed', {
      period: 'hour',
      bucket,
      hour_holes: split.periods('hour') + (halves.length > 0 ? ` AND hour NOT IN ${HALVES}` : ''),
      rollup_conditions: rollupConditions,
      half_rows: halves.length > 0 ? renderSql('_chart_halves', { rollup_conditions: rollupConditions }) : '',
      value: segment.value,
      outside: rest ? renderSql('_chart_outside', { bucket, rows: renderSql(snapshot ? '_chart_outside_snapshot' : '_chart_outside_events', outside) }) : '',
    }),
    params: params.values,
  }
}
