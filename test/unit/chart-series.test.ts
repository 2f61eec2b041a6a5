/**
 * The chart body from each series' rows, without HTTP or the engine: buckets laid out in order with
 * zeros where no row came back, totals, the comparison with the previous period, breakdown groups
 * and their ranking. Expected values are worked out by hand from the rows below.
 */
import { DateTime } from 'luxon'
import { describe, expect, it } from 'vitest'
import { assembleChart, chartBuckets, compare, groupRows, summarize } from '../../src/query/chart-series.ts'
import type { ChartSeriesRow } from '../../src/query/charts.ts'
import { InvalidInput } from '../../src/query/errors.ts'
import type { TimeRange } from '../../src/query/time-range.ts'

const range = (start: string, end: string, timezone = 'UTC'): TimeRange => ({
  start: DateTime.fromISO(start, { zone: timezone }),
  end: DateTime.fromISO(end, { zone: timezone }),
  timezone,
})

/** Three UTC days, 1–3 March 2026, and the three before them. */
const MARCH = range('2026-03-01T00:00:00', '2026-03-04T00:00:00')
const FEBRUARY_END = range('2026-02-26T00:00:00', '2026-03-01T00:00:00')
const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 1000

const row = (fields: Partial<ChartSeriesRow>): ChartSeriesRow => ({
  period: 0,
  bucket: 0,
  is_total: 0,
  value: 0,
  profiles: 0,
  l0: '',
  l1: '',
  l2: '',
  ...fields,
})

describe('summarize and compare', () => {
  it('sum, mean over every bucket (zeros included, 2 decimals), min and max', () => {
    expect(summarize([3, 0, 5])).toEqual({ sum: 8, average: 2.67, min: 0, max: 5 })
    expect(summarize([])).toEqual({ sum: 0, average: 0, min: 0, max: 0 })
    expect(summarize([-1, -2])).toEqual({ sum: -3, average: -1.5, min: -2, max: -1 })
  })

  it('percent change with one decimal, its sign kept; null against 0', () => {
    expect(compare(15, 10)).toEqual({ value: 10, diff: 50, state: 'positive' })
    expect(compare(10, 15)).toEqual({ value: 15, diff: -33.3, state: 'negative' })
    expect(compare(7, 7)).toEqual({ value: 7, diff: 0, state: 'neutral' })
    expect(compare(4, 0)).toEqual({ value: 0, diff: null, state: 'positive' })
  })
})

describe('groupRows', () => {
  it('one group per label tuple, bucket values and profile totals per period', () => {
    const groups = groupRows(
      [
        row({ bucket: 1, value: 2, l0: 'SE', l1: 'x' }),
        row({ bucket: 2, value: 3, l0: 'SE', l1: 'x' }),
        row({ period: 1, bucket: 9, value: 4, l0: 'SE', l1: 'x' }),
        row({ is_total: 1, profiles: 6, l0: 'SE', l1: 'x' }),
        row({ period: 1, is_total: 1, profiles: 2, l0: 'SE', l1: 'x' }),
        row({ bucket: 1, value: 1, l0: 'DE', l1: 'x' }),
      ],
      2,
    )
    expect(groups.map((g) => g.labels)).toEqual([['SE', 'x'], ['DE', 'x']])
    expect([...groups[0]!.current]).toEqual([[1, 2], [2, 3]])
    expect([...groups[0]!.previous]).toEqual([[9, 4]])
    expect([groups[0]!.profiles, groups[0]!.previousProfiles]).toEqual([6, 2])
  })

  it('a series without breakdowns and without rows still has its one empty group; with breakdowns, none', () => {
    expect(groupRows([], 0).map((g) => g.labels)).toEqual([[]])
    expect(groupRows([], 1)).toEqual([])
  })
})

describe('chartBuckets', () => {
  it('every day of the window', () => {
    expect(chartBuckets(MARCH, 'day').map((t) => t.toSeconds())).toEqual([day('2026-03-01'), day('2026-03-02'), day('2026-03-03')])
  })

  it('refuses more than 10,000 buckets, naming the interval', () => {
    const year = range('2025-01-01T00:00:00', '2026-01-01T00:00:00')
    try {
      chartBuckets(year, 'minute')
      expect.unreachable()
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidInput)
      expect((err as InvalidInput).details).toEqual([{ path: 'interval', message: expect.stringContaining('more than 10000 minute buckets') }])
    }
  })
})

describe('assembleChart', () => {
  const bucketStarts = chartBuckets(MARCH, 'day')

  it('one series: its buckets in order with zeros, totals and the distinct profiles', () => {
    const chart = assembleChart({
      bucketStarts,
      interval: 'day',
      names: ['screen_view'],
      breakdowns: [],
      rows: [[row({ bucket: day('2026-03-01'), value: 3 }), row({ bucket: day('2026-03-03'), value: 5 }), row({ is_total: 1, profiles: 4 })]],
    })
    expect(chart.series).toHaveLength(1)
    const [s] = chart.series
    expect(s!.names).toEqual(['screen_view'])
    expect(s!.event).toEqual({ id: 'A', name: 'screen_view' })
    expect(s!.data).toEqual([
      { date: '2026-03-01T00:00:00Z', count: 3 },
      { date: '2026-03-02T00:00:00Z', count: 0 },
      { date: '2026-03-03T00:00:00Z', count: 5 },
    ])
    expect(s!.metrics).toEqual({ sum: 8, average: 2.67, min: 0, max: 5, count: 4 })
    expect(chart.metrics).toEqual({ sum: 8, average: 2.67, min: 0, max: 5 })
  })

  it('several series are lettered and ranked by sum, ties by name', () => {
    const chart = assembleChart({
      bucketStarts,
      interval: 'day',
      names: ['a', 'b', 'c'],
      breakdowns: [],
      rows: [[row({ bucket: day('2026-03-01'), value: 1 })], [row({ bucket: day('2026-03-02'), value: 9 })], [row({ bucket: day('2026-03-02'), value: 1 })]],
    })
    expect(chart.series.map((s) => s.names[0])).toEqual(['(B) b', '(A) a', '(C) c'])
    expect(chart.series.map((s) => s.id)).toEqual(['b-B', 'a-A', 'c-C'])
    // Over all nine buckets: 1 + 9 + 1.
    expect(chart.metrics).toEqual({ sum: 11, average: 1.22, min: 0, max: 9 })
  })

  it('breakdown groups: names, event.breakdowns, slugged ids made unique', () => {
    const chart = assembleChart({
      bucketStarts,
      interval: 'day',
      names: ['Sign Up!'],
      breakdowns: ['country', 'properties.plan'],
      rows: [
        [
          row({ bucket: day('2026-03-01'), value: 2, l0: 'SE', l1: 'Pro Plan' }),
          row({ bucket: day('2026-03-02'), value: 2, l0: 'SE', l1: 'pro-plan' }),
          row({ bucket: day('2026-03-03'), value: 7, l0: 'DE', l1: '' }),
        ],
      ],
    })
    expect(chart.series.map((s) => s.names)).toEqual([
      ['Sign Up!', 'DE', ''],
      ['Sign Up!', 'SE', 'Pro Plan'],
      ['Sign Up!', 'SE', 'pro-plan'],
    ])
    expect(chart.series.map((s) => s.id)).toEqual(['sign-up-A-de-', 'sign-up-A-se-pro-plan', 'sign-up-A-se-pro-plan-2'])
    expect(chart.series[0]!.event).toEqual({ id: 'A', name: 'Sign Up!', breakdowns: { country: 'DE', 'properties.plan': '' } })
  })

  it('with the previous period: each bucket against its counterpart, and the totals compared', () => {
    const chart = assembleChart({
      bucketStarts,
      previous: FEBRUARY_END,
      interval: 'day',
      names: ['x'],
      breakdowns: [],
      rows: [
        [
          row({ bucket: day('2026-03-01'), value: 4 }),
          row({ bucket: day('2026-03-02'), value: 2 }),
          row({ period: 1, bucket: day('2026-02-26'), value: 2 }),
          row({ period: 1, bucket: day('2026-02-28'), value: 6 }),
          row({ is_total: 1, profiles: 3 }),
          row({ period: 1, is_total: 1, profiles: 3 }),
        ],
      ],
    })
    const [s] = chart.series
    expect(s!.data.map((d) => [d.count, d.previous])).toEqual([
      [4, { value: 2, diff: 100, state: 'positive' }],
      [2, { value: 0, diff: null, state: 'positive' }],
      [0, { value: 6, diff: -100, state: 'negative' }],
    ])
    // Current 4, 2, 0 (sum 6, mean 2, min 0, max 4); previous 2, 0, 6 (sum 8, mean 2.67, min 0, max 6).
    expect(s!.metrics.previous).toEqual({
      sum: { value: 8, diff: -25, state: 'negative' },
      average: { value: 2.67, diff: -25.1, state: 'negative' },
      min: { value: 0, diff: null, state: 'neutral' },
      max: { value: 6, diff: -33.3, state: 'negative' },
      count: { value: 3, diff: 0, state: 'neutral' },
    })
  })

  it('a previous period with no profiles on either side has no count comparison', () => {
    const chart = assembleChart({ bucketStarts, previous: FEBRUARY_END, interval: 'day', names: ['x'], breakdowns: [], rows: [[]] })
    expect(chart.series[0]!.metrics).toEqual({
      sum: 0,
      average: 0,
      min: 0,
      max: 0,
      previous: {
        sum: { value: 0, diff: null, state: 'neutral' },
        average: { value: 0, diff: null, state: 'neutral' },
        min: { value: 0, diff: null, state: 'neutral' },
        max: { value: 0, diff: null, state: 'neutral' },
      },
    })
  })
})
