/**
 * Event filters on the sealed history (sql/schema/027_sealed_event_postings.sql): the requests with
 * one filter through the app in process (p50 of N, with the load), and, interleaved, the two ways
 * to find the sealed sessions an event filter keeps: the events' scan from the window's start (what
 * requests did before 027) against the union of the build's postings.
 *
 *   npx tsx benchmarks/experiments/event-filters.ts DATA_DIR PROJECT [RUNS]
 */
import { loadavg } from 'node:os'
import { clickhouseInstant } from '../../src/query/time-range.ts'
import { sealedProjectApp } from '../lib/sealed-project.ts'

const [dir, project, runsArg = '9'] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: event-filters.ts DATA_DIR PROJECT [RUNS]')
const runs = Number(runsArg)
const { rt, clock, computed: build, app, headers } = await sealedProjectApp(dir, project, 'event-filters')

const PATH = { name: 'path', operator: 'contains', value: ['/blog'] }
const FILTERS: Record<string, object[]> = {
  none: [],
  'country is US (session)': [{ name: 'country', operator: 'is', value: ['US'] }],
  'path contains /blog (event)': [PATH],
  'name is revenue (event)': [{ name: 'name', operator: 'is', value: ['revenue'] }],
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const load = () => loadavg()[0]!.toFixed(1)

console.log(`${project}, C ${build.closedAt.toISO()}, 30d, p50 of ${runs} in process\n`)
console.log('| route | filter | p50 ms | sealed | load |\n|---|---|--:|---|--:|')
for (const route of ['country', 'metrics', 'referrer_name', 'pages']) {
  for (const [label, filters] of Object.entries(FILTERS)) {
    const q = `range=30d${filters.length ? `&filters=${encodeURIComponent(JSON.stringify(filters))}` : ''}`
    const times: number[] = []
    let isSealed = false
    for (let i = 0; i <= runs; i++) {
      const t = performance.now()
      const res = await app.request(`http://q.bench/insights/${project}/${route}?${q}`, { headers })
      await res.text()
      if (res.status !== 200) throw new Error(`${route} ${label}: ${res.status}`)
      if (i > 0) times.push(performance.now() - t)
      isSealed = res.headers.has('x-quarry-sealed-until')
    }
    console.log(`| ${route} | ${label} | ${median(times).toFixed(0)} | ${isSealed} | ${load()} |`)
  }
}

// The sessions of the 30 days that have a matching event, both ways, interleaved.
const from = clickhouseInstant(clock.startOf('day').minus({ days: 30 }))
const params = { project, version: build.version, from, pattern: ['/blog'] }
const WAYS = {
  'events scan (before)': `SELECT uniqExact(session_id) AS n FROM events WHERE project_id = {project:String} AND created_at >= {from:DateTime64(3, 'UTC')} AND multiSearchAny(path, {pattern:Array(String)})`,
  'postings (after)': `SELECT bitmapCardinality(groupBitmapMergeState(sessions)) AS n FROM sealed_event_postings WHERE project_id = {project:String} AND version = {version:UInt64} AND day >= toDate({from:DateTime64(3, 'UTC')}) AND multiSearchAny(path, {pattern:Array(String)})`,
}
const names = Object.keys(WAYS) as (keyof typeof WAYS)[]
const times = new Map(names.map((n) => [n, [] as number[]]))
const counts = new Map<string, number>()
for (let i = 0; i <= runs; i++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(i + k) % names.length]!
    const t = performance.now()
    const [row] = await rt.runner.rows<{ n: number }>({ name, sql: WAYS[name], params }, { timeoutS: 120 })
    if (i > 0) times.get(name)!.push(performance.now() - t)
    counts.set(name, row!.n)
  }
}
console.log(`\nThe sessions with a path containing /blog from ${from}, interleaved, medians of ${runs}, load ${load()}`)
console.log('(the scan counts every session with such an event, live and held ones too; the postings the sealed whole ones)\n')
console.log('| way | ms | sessions |\n|---|--:|--:|')
for (const name of names) console.log(`| ${name} | ${median(times.get(name)!).toFixed(0)} | ${counts.get(name)} |`)
await rt.close()
