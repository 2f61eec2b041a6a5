import type { DateTime } from 'luxon'
import { MAX_CHART_POINTS, MAX_CHART_ROWS, type ChartSeriesRow } from './charts.ts'
import { invalidParameters } from './errors.ts'
import { boundedBuckets, buckets, isoWithOffset, MAX_BUCKETS, type Interval, type TimeRange } from './time-range.ts'

/**
 * The body of /export/charts from each series' rows: OpenPanel's series objects (one per series
 * and breakdown group), their totals and comparisons with the previous period, ranked. The values
 * are already aggregated by ClickHouse; this only lays out one value per bucket and sums short lists.
 */

export interface Comparison {
  value: number
  diff: number | null
  state: 'positive' | 'negative' | 'neutral'
}

export interface Totals {
  sum: number
  average: number
  min: number
  max: number
}

export interface ChartSeries {
  id: string
  names: string[]
  event: { id: string; name: string; breakdowns?: Record<string, string> }
  data: { date: string; count: number; previous?: Comparison }[]
  metrics: Totals & {
    count?: number
    previous?: { sum: Comparison; average: Comparison; min: Comparison; max: Comparison; count?: Comparison }
  }
}

export interface Chart {
  series: ChartSeries[]
  metrics: Totals
}

/** What the caller asked for, and the rows each series' statement returned (same order). */
export interface ChartInput {
  /** The window's buckets (chartBuckets). */
  bucketStarts: readonly DateTime[]
  previous?: TimeRange
  interval: Interval
  /** The series' event names, in request order. */
  names: readonly string[]
  breakdowns: readonly string[]
  rows: readonly (readonly ChartSeriesRow[])[]
}

/** The start of every bucket of the window. */
export const chartBuckets = (range: TimeRange, interval: Interval): DateTime[] =>
  boundedBuckets(range, interval, 'choose a larger interval or a shorter range')

const round = (x: number, decimals: number) => {
  const f = 10 ** decimals
  return (Math.sign(x) * Math.round(Math.abs(x) * f)) / f
}

/** OpenPanel's comparison, with the sign of the change kept. */
export function compare(current: number, previous: number): Comparison {
  return {
    value: previous,
    diff: previous === 0 ? null : round(((current - previous) / previous) * 100, 1),
    state: current > previous ? 'positive' : current < previous ? 'negative' : 'neutral',
  }
}

/** The sum, mean (every bucket, zeros included), min and max of a series' bucket values. */
export function summarize(values: readonly number[]): Totals {
  if (values.length === 0) return { sum: 0, average: 0, min: 0, max: 0 }
  // A loop, not Math.min(...values): a chart's values (every point of every series) overflow the
  // call stack as arguments from about 120,000 on.
  let [sum, min, max] = [0, Infinity, -Infinity]
  for (const v of values) {
    sum += v
    if (v < min) min = v
    if (v > max) max = v
  }
  return { sum, average: round(sum / values.length, 2), min, max }
}

const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '')

const compareNames = (a: readonly string[], b: readonly string[]) => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1
  }
  return a.length - b.length
}

interface Group {
  labels: string[]
  current: Map<number, number>
  previous: Map<number, number>
  profiles: number
  previousProfiles: number
}

/** The breakdown groups of one series' rows; a series without breakdowns always has its one group. */
export function groupRows(rows: readonly ChartSeriesRow[], breakdowns: number): Group[] {
  const groups = new Map<string, Group>()
  const group = (labels: string[]) => {
    const key = JSON.stringify(labels)
    let found = groups.get(key)
    if (!found) {
      found = { labels, current: new Map(), previous: new Map(), profiles: 0, previousProfiles: 0 }
      groups.set(key, found)
    }
    return found
  }
  for (const row of rows) {
    const g = group([row.l0, row.l1, row.l2].slice(0, breakdowns))
    if (row.is_total === 1) {
      if (row.period === 0) g.profiles = row.profiles
      else g.previousProfiles = row.profiles
    } else {
      ;(row.period === 0 ? g.current : g.previous).set(row.bucket, row.value)
    }
  }
  if (breakdowns === 0 && groups.size === 0) group([])
  return [...groups.values()]
}

/**
 * Refuses a chart of more than MAX_CHART_POINTS points (each series' groups times the buckets laid
 * out) before it is built, saying what would make it fit.
 */
export function assertChartSize(rows: readonly (readonly ChartSeriesRow[])[], buckets: number): void {
  let points = 0
  for (const series of rows) {
    // The engine stopped at MAX_CHART_ROWS: more rows than any chart within the bound answers.
    if (series.length >= MAX_CHART_ROWS) {
      points = Infinity
      break
    }
    const groups = new Set(series.map((r) => `${r.l0}\u0000${r.l1}\u0000${r.l2}`)).size
    points += Math.max(groups, 1) * buckets
  }
  if (points > MAX_CHART_POINTS) {
    const held = Number.isFinite(points) ? `${points} points` : `more than ${MAX_CHART_POINTS} points`
    throw invalidParameters([
      {
        path: 'limit',
        message: `the chart would hold ${held} (breakdown groups x buckets, over its series), at most ${MAX_CHART_POINTS}: lower limit, choose a longer interval or a shorter window`,
      },
    ])
  }
}

/** Series ids are unique within a response: a repeated one takes -2, -3, … */
function idMaker() {
  const used = new Set<string>()
  return (base: string) => {
    let id = base
    for (let n = 2; used.has(id); n++) id = `${base}-${n}`
    used.add(id)
    return id
  }
}

export function assembleChart(input: ChartInput): Chart {
  const { bucketStarts } = input
  const previousStarts = input.previous ? buckets(input.previous, input.interval).slice(0, MAX_BUCKETS) : []
  const { breakdowns } = input
  const uniqueId = idMaker()
  const series: ChartSeries[] = []
  input.names.forEach((name, index) => {
    const letter = String.fromCharCode(65 + index)
    const title = input.names.length > 1 ? `(${letter}) ${name}` : name
    for (const group of groupRows(input.rows[index]!, breakdowns.length)) {
      const values = bucketStarts.map((t) => group.current.get(t.toSeconds()) ?? 0)
      const previousValues = previousStarts.map((t) => group.previous.get(t.toSeconds()) ?? 0)
      const totals = summarize(values)
      let metricsPrevious: ChartSeries['metrics']['previous']
      if (input.previous) {
        const before = summarize(previousValues)
        metricsPrevious = {
          sum: compare(totals.sum, before.sum),
          average: compare(totals.average, before.average),
          min: compare(totals.min, before.min),
          max: compare(totals.max, before.max),
          ...(group.profiles > 0 || group.previousProfiles > 0 ? { count: compare(group.profiles, group.previousProfiles) } : {}),
        }
      }
      series.push({
        id: uniqueId([slug(name) || 'all', letter, ...group.labels.map(slug)].join('-')),
        names: [title, ...group.labels],
        event: {
          id: letter,
          name,
          ...(breakdowns.length > 0 ? { breakdowns: Object.fromEntries(breakdowns.map((b, i) => [b, group.labels[i]!])) } : {}),
        },
        data: bucketStarts.map((t, i) => ({
          date: isoWithOffset(t),
          count: values[i]!,
          ...(input.previous && i < previousValues.length ? { previous: compare(values[i]!, previousValues[i]!) } : {}),
        })),
        metrics: {
          ...totals,
          ...(group.profiles > 0 ? { count: group.profiles } : {}),
          ...(metricsPrevious ? { previous: metricsPrevious } : {}),
        },
      })
    }
  })
  series.sort((a, b) => b.metrics.sum - a.metrics.sum || compareNames(a.names, b.names))
  return { series, metrics: summarize(series.flatMap((s) => s.data.map((d) => d.count))) }
}
