/**
 * Latency of the product-analytics routes (issue 21) over real HTTP against a seeded data
 * directory, cache off, every cell's requests interleaved with the others' in a rotating order so
 * that a loaded machine weighs on all of them alike. The clock is pinned half an hour after the
 * project's last event (the windows then end where the data does) and the project's sealed
 * history is built first (timed), as `quarry serve` would have it. Per cell: p50/p90/p99 over
 * HTTP, the server's `db` time, whether the sealed history answered, with the load average.
 *   QUARRY_DATA_DIR=… npx tsx benchmarks/product-latency.ts --project pl [--runs 50] [--out product-latency] [--reuse] [--only funnel,user_flow] [--skip '(events)']
 */
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { buildApp } from '../src/app.ts'
import { createClientRow } from '../src/auth/clients.ts'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/log.ts'
import { openRuntime } from '../src/runtime.ts'
import { listen } from '../src/server.ts'
import { cellFigures, sampleCells, saveReport } from './lib/cells.ts'
import { sealOnDataClock } from './lib/data-clock.ts'
import { agent } from './lib/http.mjs'
import { round } from './lib/stats.ts'

const { values } = parseArgs({
  options: {
    project: { type: 'string', default: 'pl' },
    runs: { type: 'string', default: '50' },
    out: { type: 'string', default: 'product-latency' },
    reuse: { type: 'boolean', default: false },
    only: { type: 'string' },
    skip: { type: 'string' },
  },
})
const project = values.project!
const runs = Number(values.runs)
const warmup = Math.min(2, runs)
const load = () => loadavg().map((l) => round(l, 2))
const loadAtStart = load()
const config = { ...loadConfig(), LOG_LEVEL: 'warn' as const, QUARRY_RATE_LIMIT: 1_000_000, QUARRY_SEALED: false }
const rt = await openRuntime(config, createLogger('warn'))
const { clock, now, events, sealed, buildMs: sealedBuildMs } = await sealOnDataClock(rt, project, { reuse: values.reuse!, queryTimeoutS: 60 })
console.log(`sealed ${project} (${events} events): ${sealedBuildMs === null ? 'reused' : `${sealedBuildMs} ms`}`)

const client = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'default', name: 'bench-product' })
const headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
const app = buildApp({ config, runner: rt.runner, logger: rt.logger, signingKey: rt.signingKey, now, sealed, metrics: false })
const eventsOnly = buildApp({ config, runner: rt.runner, logger: rt.logger, signingKey: rt.signingKey, now, metrics: false })
const servers = { sealed: await listen(app, '127.0.0.1', 0), events: await listen(eventsOnly, '127.0.0.1', 0) }
const keepAlive = agent(1)

const window30 = `range=30d`
const steps = (names: string[]) => names.map((n) => `steps=${n}`).join('&')
const FUNNEL3 = steps(['screen_view', 'add_to_cart', 'checkout'])
const FUNNEL5 = steps(['screen_view', 'search', 'add_to_cart', 'checkout', 'revenue'])
/**
 * Each cell: the route with its query, and which app answers it (the sealed one unless said).
 * Active users over the events alone is left out: it outlasts the query timeout on L (23 s bare,
 * product-profile.ts), and the embedded engine finishes a timed-out statement before the next one,
 * which would charge its rest to the cell after it.
 */
const allCells: { name: string; path: string; server?: 'events' }[] = [
  { name: 'funnel 3 steps, session, 30d', path: `funnel?${window30}&${FUNNEL3}` },
  { name: 'funnel 3 steps, session, 30d (events)', path: `funnel?${window30}&${FUNNEL3}`, server: 'events' },
  { name: 'funnel 5 steps, session, 30d', path: `funnel?${window30}&${FUNNEL5}` },
  { name: 'funnel 5 steps, session, 30d (events)', path: `funnel?${window30}&${FUNNEL5}`, server: 'events' },
  { name: 'funnel 3 steps, profile, 30d', path: `funnel?${window30}&${FUNNEL3}&groupBy=profile_id` },
  { name: 'funnel 5 steps, profile, 30d', path: `funnel?${window30}&${FUNNEL5}&groupBy=profile_id` },
  { name: 'retention, all time (sealed)', path: 'retention' },
  { name: 'retention, all time (events)', path: 'retention', server: 'events' },
  { name: 'retention/cohort, 13 weeks (sealed)', path: 'retention/cohort' },
  { name: 'retention/cohort, 13 weeks (events)', path: 'retention/cohort', server: 'events' },
  { name: 'active_users?days=30 (sealed)', path: 'active_users?days=30' },
  { name: 'active_users?days=30, 30d window (sealed)', path: `active_users?days=30&${window30}` },
  { name: 'engagement (sealed)', path: 'engagement' },
  { name: 'engagement (events)', path: 'engagement', server: 'events' },
  { name: 'user_flow 5 steps, 30d', path: `user_flow?${window30}&startEvent=screen_view&steps=5` },
  { name: 'user_flow 5 steps, 30d (events)', path: `user_flow?${window30}&startEvent=screen_view&steps=5`, server: 'events' },
]
/** --only: the cells whose name contains it (or one of its comma-separated parts); --skip: not those whose name contains it. */
const cells = allCells.filter(
  (c) => (values.only === undefined || values.only.split(',').some((part) => c.name.includes(part))) && (values.skip === undefined || !c.name.includes(values.skip)),
)

const sealedUntil = cells.map(() => false)
const samples = await sampleCells(
  cells.map((c) => ({ name: c.name, url: `http://127.0.0.1:${servers[c.server ?? 'sealed'].port}/insights/${project}/${c.path}` })),
  {
    runs,
    warmup,
    headers,
    agent: keepAlive,
    // A statement past the query timeout (QUARRY_QUERY_TIMEOUT_S) is a 504: counted, not timed.
    tolerated: 504,
    seen: (i, reply) => (sealedUntil[i] = reply.headers['x-quarry-sealed-until'] !== undefined),
    round: (done) => console.log(`round ${done} of ${runs + warmup}, load ${load().join(' ')}`),
  },
)

const results = cells.map((cell, i) => ({
  cell: cell.name,
  path: cell.path,
  ...cellFigures(samples[i]!),
  sealed: sealedUntil[i],
  timeouts: samples[i]!.tolerated,
}))
for (const r of results) console.log(JSON.stringify(r))
saveReport(values.out!, {
  engine: rt.engine.mode,
  project,
  events,
  clock: clock.toISO(),
  runs,
  sealed_build_ms: sealedBuildMs,
  load_average: { start: loadAtStart, end: load() },
  results,
})
await servers.sealed.shutdown(1000)
await servers.events.shutdown(1000)
sealed.stop()
await rt.close()
