/**
 * Median and p90 latency of every insights endpoint over real HTTP, against an existing data
 * directory (seed it first: `quarry seed --project demo --events 1000000`). The app is the one
 * `quarry serve` runs, without the response cache, on a clock half an hour past the project's last
 * event, so that requests read the sessions after C as under traffic: it reads the sealed history
 * (built first, and its build time reported; --reuse keeps a build an earlier run made for that
 * clock) unless QUARRY_SEALED=0. /export/charts is timed too, for one series of screen views
 * counted as events and as users.
 *   QUARRY_DATA_DIR=… npx tsx benchmarks/insights-latency.ts [--project demo] [--runs 20] [--range 30d] [--reuse] [--out name]
 *     [--only REGEX] (the cells whose name matches) [--log FILE] (every statement's line, with its request's id, as JSON lines)
 */
import { createWriteStream, writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import { parseArgs } from 'node:util'
import { DateTime } from 'luxon'
import { buildApp } from '../src/app.ts'
import { createClientRow } from '../src/auth/clients.ts'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/log.ts'
import { findProject } from '../src/projects.ts'
import { DIMENSIONS } from '../src/query/dimensions.ts'
import { openRuntime } from '../src/runtime.ts'
import { listen } from '../src/server.ts'
import { sealOnDataClock } from './lib/data-clock.ts'

const { values } = parseArgs({
  options: {
    project: { type: 'string', default: 'demo' },
    runs: { type: 'string', default: '20' },
    range: { type: 'string', default: '30d' },
    reuse: { type: 'boolean', default: false },
    out: { type: 'string' },
    only: { type: 'string' },
    log: { type: 'string' },
  },
})
const runs = Number(values.runs)
const loaded = loadConfig()
// The runtime's own sealed history would seal on the wall clock; this one seals on the data's.
const config = { ...loaded, LOG_LEVEL: 'warn' as const, QUARRY_RATE_LIMIT: 1_000_000, QUARRY_SEALED: false }
const rt = await openRuntime(config, values.log ? createLogger('debug', createWriteStream(values.log)) : createLogger('warn'))
const client = await createClientRow(rt.runner, { type: 'read', projectId: values.project!, organizationId: 'default', name: 'bench' })
const project = await findProject(rt.runner, values.project!)
if (!project) throw new Error(`no project ${values.project}`)
const onData = loaded.QUARRY_SEALED ? await sealOnDataClock(rt, project.id, { reuse: values.reuse!, queryTimeoutS: config.QUARRY_QUERY_TIMEOUT_S }) : undefined
const sealed = onData?.sealed
const sealedBuildMs = onData?.buildMs ?? null
const clock = onData?.clock ?? DateTime.utc()
const now = () => clock.toJSDate()
const loadAtStart = loadavg()[0]
const server = await listen(buildApp({ config, runner: rt.runner, logger: rt.logger, signingKey: rt.signingKey, now, sealed }), '127.0.0.1', 0)
const origin = `http://127.0.0.1:${server.port}`
const headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }

const chart = (segment: string) =>
  `/export/charts?${new URLSearchParams({ projectId: values.project!, range: values.range!, interval: 'day', series: JSON.stringify([{ name: 'screen_view', segment }]) })}`
const cells: [string, string][] = [
  ...['metrics', 'live', 'pages', ...DIMENSIONS.map((d) => d.name)].map((e): [string, string] => [e, `/insights/${values.project}/${e}${e === 'live' ? '' : `?range=${values.range}`}`]),
  ['export/charts events', chart('event')],
  ['export/charts users', chart('user')],
]
const only = values.only === undefined ? undefined : new RegExp(values.only)
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
const results: { endpoint: string; median_ms: number; p90_ms: number; p99_ms: number; db_median_ms: number; sealed: boolean; samples_ms: number[]; db_samples_ms: number[] }[] = []
for (const [endpoint, path] of cells.filter(([name]) => !only || only.test(name))) {
  const url = `${origin}${path}`
  // In request order, so that one slow request can be told apart from a slow stretch (p99 of 50 is about the worst).
  const samples: number[] = []
  const dbSamples: number[] = []
  let fromSealed = 0
  for (let i = 0; i < runs + 2; i++) {
    const started = performance.now()
    const res = await fetch(url, { headers })
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`${endpoint}: ${res.status}`)
    if (i < 2) continue
    samples.push(+(performance.now() - started).toFixed(1))
    if (res.headers.has('x-quarry-sealed-until')) fromSealed++
    dbSamples.push(Number(/db;dur=([\d.]+)/.exec(res.headers.get('server-timing') ?? '')?.[1] ?? 0))
  }
  const times = [...samples].sort((a, b) => a - b)
  const dbTimes = [...dbSamples].sort((a, b) => a - b)
  const summary = {
    endpoint,
    median_ms: +quantile(times, 0.5).toFixed(1),
    p90_ms: +quantile(times, 0.9).toFixed(1),
    p99_ms: +quantile(times, 0.99).toFixed(1),
    db_median_ms: +quantile(dbTimes, 0.5).toFixed(1),
    sealed: fromSealed === runs,
  }
  console.log(summary)
  results.push({ ...summary, samples_ms: samples, db_samples_ms: dbSamples })
}
const [counted] = await rt.runner.rows<{ count: number }>({ name: 'count', sql: 'SELECT count() AS count FROM events WHERE project_id = {p:String}', params: { p: values.project } }, { timeoutS: 60 })
const report = {
  machine: { cores: cpus().length, memory_gb: Math.round(totalmem() / 2 ** 30) },
  engine: rt.engine.mode,
  events: counted?.count ?? 0,
  range: values.range,
  runs,
  clock: clock.toISO(),
  load: [loadAtStart, loadavg()[0]],
  sealed_build_ms: sealedBuildMs,
  results,
}
writeFileSync(new URL(`./results/${values.out ?? `insights-latency-${values.range}`}.json`, import.meta.url), `${JSON.stringify(report, null, 2)}\n`)
await server.shutdown(1000)
await rt.close()
