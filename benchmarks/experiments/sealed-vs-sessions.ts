/**
 * Breakdowns and /metrics over a seeded data directory, answered the two ways Quarry can: the
 * statements over `sessions FINAL` and those over the sealed history, interleaved, medians of N
 * runs, each pair checked for identical rows. Seals the project first (a full build, timed).
 *
 *   npx tsx benchmarks/experiments/sealed-vs-sessions.ts DATA_DIR PROJECT [RUNS] [reuse]
 *
 * `reuse` keeps the project's newest build when it has one (bench.ts leaves one for M and L).
 *
 * The clock is half an hour past the project's last event, so the live part holds the hour or so
 * after C, as under traffic.
 */
import { openSealedProject } from '../lib/sealed-project.ts'
import { findDimension } from '../../src/query/dimensions.ts'
import { chartBuckets } from '../../src/query/chart-series.ts'
import { chartSeriesStatement, type ChartSeriesRow } from '../../src/query/charts.ts'
import { breakdownStatement } from '../../src/query/insights.ts'
import { metricsBuckets, metricsStatement } from '../../src/query/metrics.ts'
import { sealedChartSeriesStatement } from '../../src/query/sealed-charts.ts'
import { sealedBreakdownStatement } from '../../src/query/sealed.ts'
import { sealedMetricsStatement } from '../../src/query/sealed-metrics.ts'
import type { Filter } from '../../src/query/filters.ts'

const [dir, project, runsArg = '9', reuse] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: sealed-vs-sessions.ts DATA_DIR PROJECT [RUNS] [reuse]')
const runs = Number(runsArg)
const read = { timeoutS: 600 }
const { rt, clock, computed, written } = await openSealedProject(dir, project, reuse === 'reuse')

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const same = (a: unknown[], b: unknown[]) => JSON.stringify(a) === JSON.stringify(b)
const chartRows = (rows: ChartSeriesRow[]) => [...rows].sort((p, q) => p.period - q.period || p.is_total - q.is_total || p.bucket - q.bucket)
const sorted = (rows: Record<string, number>[]) => [...rows].sort((p, q) => p.period! - q.period! || p.is_total! - q.is_total! || p.bucket! - q.bucket!)

type Statement = Parameters<typeof rt.runner.rows>[0]

async function compare(label: string, statements: Statement[], sort: (rows: any[]) => unknown[] = (r) => r) {
  const times: number[][] = statements.map(() => [])
  const rows: unknown[][] = statements.map(() => [])
  for (let i = 0; i < runs + 1; i++) {
    for (let k = 0; k < statements.length; k++) {
      const j = (i + k) % statements.length
      const t = performance.now()
      const out = await rt.runner.rows<any>(statements[j]!, read)
      if (i > 0) times[j]!.push(performance.now() - t)
      rows[j] = sort(out)
    }
  }
  const [a, ...rest] = times.map(median)
  const cells = rest.map((b) => `${b.toFixed(1)} | ${(a! / b).toFixed(1)}×`).join(' | ')
  console.log(`| ${label} | ${a!.toFixed(1)} | ${cells} | ${rows.every((r) => same(r, rows[0]!)) ? 'same' : '**DIFFERENT**'} |`)
}

console.log(`\n${runs} runs each, interleaved; C = ${computed.closedAt.toISO()}, clock ${clock.toISO()}\n`)
console.log('| request | sessions FINAL (ms) | sealed, live computed (ms) | ratio | sealed, live written (ms) | ratio | rows |\n|---|---|---|---|---|---|---|')
const WINDOWS: [string, string, number, boolean][] = [
  ['30d UTC', 'UTC', 30, true],
  ['7d UTC', 'UTC', 7, true],
  ['30d Asia/Kolkata', 'Asia/Kolkata', 30, true],
  ['30d unaligned instants', 'UTC', 30, false],
]
const FILTER: Filter[] = [{ name: 'country', operator: 'is', value: ['US'] }]
for (const [label, tz, days, aligned] of WINDOWS) {
  const end = clock.setZone(tz).startOf('day').plus({ days: 1 })
  const range = aligned
    ? { start: end.minus({ days }), end, timezone: tz }
    : { start: clock.minus({ days, minutes: 17, milliseconds: 123 }), end: clock.minus({ minutes: 3 }), timezone: tz }
  for (const dimension of ['country', 'city', 'referrer_name', 'exit_page']) {
    const req = { projectId: project, range, filters: [], limit: 11, offset: 0 }
    const d = findDimension(dimension)!
    await compare(`${label}, ${dimension}`, [breakdownStatement(d, req), sealedBreakdownStatement(d, req, computed), sealedBreakdownStatement(d, req, written)])
  }
  const interval = days > 1 ? ('day' as const) : ('hour' as const)
  const mreq = { projectId: project, range, interval, filters: [] }
  const buckets = metricsBuckets(range, interval)
  await compare(`${label}, /metrics`, [metricsStatement(mreq), sealedMetricsStatement(mreq, buckets, computed), sealedMetricsStatement(mreq, buckets, written)], sorted)
}
const end = clock.startOf('day').plus({ days: 1 })
const range = { start: end.minus({ days: 30 }), end, timezone: 'UTC' }
for (const dimension of ['country', 'city']) {
  const req = { projectId: project, range, filters: FILTER, limit: 11, offset: 0 }
  const d = findDimension(dimension)!
  await compare(`30d UTC, ${dimension}, filter country=US`, [breakdownStatement(d, req), sealedBreakdownStatement(d, req, computed), sealedBreakdownStatement(d, req, written)])
}
// /export/charts: one series over the events against the same series from the hourly event rollups.
console.log('\n| chart series, day buckets | events (ms) | sealed event rollups (ms) | ratio | rows |\n|---|---|---|---|---|')
for (const [label, tz, days] of [['30d UTC', 'UTC', 30], ['30d Europe/Berlin', 'Europe/Berlin', 30], ['90d UTC', 'UTC', 90]] as const) {
  const end = clock.setZone(tz).startOf('day').plus({ days: 1 })
  const range = { start: end.minus({ days }), end, timezone: tz }
  for (const segment of ['event', 'user'] as const) {
    for (const name of ['screen_view', '*']) {
      const series = { projectId: project, range, interval: 'day' as const, name, filters: [], segment, breakdowns: [], limit: 50, path: 'series.0' }
      await compare(`${label}, ${name}, ${segment}`, [chartSeriesStatement(series), sealedChartSeriesStatement(series, chartBuckets(range, 'day'), computed)], chartRows)
    }
  }
}
await rt.close()
