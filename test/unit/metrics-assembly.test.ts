/**
 * The /metrics body from its statement's rows, without HTTP or the engine: the window's totals,
 * one entry per bucket in order with zeros where the engine returned none, and the previous
 * window's totals when asked for. Expected values are written from the rows below.
 */
import { DateTime } from 'luxon'
import { describe, expect, it } from 'vitest'
import { InvalidInput } from '../../src/query/errors.ts'
import { assembleMetrics, metricsBuckets, METRIC_NAMES, type MetricRow, type MetricValues } from '../../src/query/metrics.ts'
import type { TimeRange } from '../../src/query/time-range.ts'

const STHLM: TimeRange = {
  start: DateTime.fromISO('2026-03-28T00:00:00', { zone: 'Europe/Stockholm' }),
  end: DateTime.fromISO('2026-03-31T00:00:00', { zone: 'Europe/Stockholm' }),
  timezone: 'Europe/Stockholm',
}

const values = (n: number): MetricValues => ({
  unique_visitors: n,
  total_sessions: n + 1,
  bounce_rate: n + 2,
  avg_session_duration: n + 3,
  total_screen_views: n + 4,
  views_per_session: n + 5,
  total_revenue: n + 6,
})
const zero = values(0)
for (const name of METRIC_NAMES) zero[name] = 0

describe('metricsBuckets', () => {
  it('local days across the spring DST change: 23 hours on the 29th', () => {
    const starts = metricsBuckets(STHLM, 'day')
    // Midnight in Stockholm: 23:00 UTC before the change (+01:00), 22:00 UTC after it (+02:00).
    expect(starts.map((t) => t.toUTC().toISO())).toEqual(['2026-03-27T23:00:00.000Z', '2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z'])
  })

  it('refuses more than 10,000 buckets', () => {
    const decade: TimeRange = { ...STHLM, start: STHLM.start.minus({ years: 4 }) }
    expect(() => metricsBuckets(decade, 'minute')).toThrow(InvalidInput)
  })
})

describe('assembleMetrics', () => {
  const starts = metricsBuckets(STHLM, 'day')
  const bucket = (i: number) => starts[i]!.toSeconds()

  it('totals, every bucket in order with zeros where none came back, no previous unless asked', () => {
    const rows: MetricRow[] = [
      { ...values(30), period: 0, bucket: 0, is_total: 1 },
      { ...values(10), period: 0, bucket: bucket(2), is_total: 0 },
      { ...values(20), period: 0, bucket: bucket(0), is_total: 0 },
    ]
    expect(assembleMetrics(rows, starts, false)).toEqual({
      metrics: values(30),
      series: [
        { date: '2026-03-28T00:00:00+01:00', ...values(20) },
        { date: '2026-03-29T00:00:00+01:00', ...zero },
        { date: '2026-03-30T00:00:00+02:00', ...values(10) },
      ],
    })
  })

  it('the previous window: its totals only, zeros when it had nothing', () => {
    const rows: MetricRow[] = [
      { ...values(30), period: 0, bucket: 0, is_total: 1 },
      { ...values(7), period: 1, bucket: 0, is_total: 1 },
      { ...values(99), period: 1, bucket: bucket(0) - 3 * 86_400, is_total: 0 },
    ]
    const body = assembleMetrics(rows, starts, true)
    expect(body.previous).toEqual(values(7))
    expect(body.series.map((s) => s.unique_visitors)).toEqual([0, 0, 0])
    expect(assembleMetrics([], starts, true).previous).toEqual(zero)
  })

  it('an empty window answers zeros everywhere, in the names and order OpenPanel uses', () => {
    const body = assembleMetrics([], starts, false)
    expect(Object.keys(body.metrics)).toEqual([
      'unique_visitors',
      'total_sessions',
      'bounce_rate',
      'avg_session_duration',
      'total_screen_views',
      'views_per_session',
      'total_revenue',
    ])
    expect(body.metrics).toEqual(zero)
    expect(body.series).toHaveLength(3)
  })
})
