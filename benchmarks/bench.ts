/**
 * Quarry's benchmark: latency per endpoint over real HTTP against the bare engine time of the same
 * SQL and the SQL OpenPanel would run (interleaved, so the ratios survive a loaded machine),
 * throughput at concurrency 32 (warm cache, uncached, cold stampede) and export throughput.
 * See benchmarks/README.md.
 *
 *   npm run bench        -- --preset 10m [--dir D] [--requests 200] [--min-requests 200] [--budget-s 60] [--optimize]
 *   npm run bench:quick  (30d only, fewer requests, shorter load phases, 1M-row export; < 10 min)
 *
 * --cold-snapshots: the uncached phase also times its projects' first snapshot writes.
 * --read-lanes N: QUARRY_READ_LANES for the run (0: every read on chDB's one line), to compare.
 * BENCH_LOG=FILE: the servers' debug log there (each statement's name and time), to see a phase's statements.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pino from 'pino'
import { buildApp } from '../src/app.ts'
import { createClientRow } from '../src/auth/clients.ts'
import { configSchema } from '../src/config.ts'
import { createResponseCache } from '../src/http/cache/middleware.ts'
import { eventsWatermark } from '../src/http/cache/watermark.ts'
import { createLogger } from '../src/log.ts'
import { createProject, findProject } from '../src/projects.ts'
import { DIMENSIONS } from '../src/query/dimensions.ts'
import { configuredSealedHistory } from '../src/services/sealed/index.ts'
import { openRuntime, type Runtime } from '../src/runtime.ts'
import { PRESETS, presetPlan, seedPlan, type PresetName } from '../src/seed/presets.ts'
import { listen } from '../src/server.ts'
import { runLoadWorker } from './lib/run-load-worker.ts'
import { agent, get } from './lib/http.mjs'
import { runBare } from './lib/bare.ts'
import { buildPeer, peerFor } from './lib/peer.ts'
import { writeReport } from './lib/report.ts'
import { settle } from './lib/settle.ts'
import { tallyStatements, type Tally } from './lib/statement-tally.ts'
import { round, summarize, quantile, type Summary } from './lib/stats.ts'

const HERE = dirname(fileURLToPath(import.meta.url))
const { values: args } = parseArgs({
  options: {
    preset: { type: 'string', default: '10m' },
    dir: { type: 'string' },
    quick: { type: 'boolean', default: false },
    requests: { type: 'string' },
    'min-requests': { type: 'string' },
    'budget-s': { type: 'string' },
    windows: { type: 'string' },
    projects: { type: 'string', default: 'M,L' },
    endpoints: { type: 'string' },
    optimize: { type: 'boolean', default: false },
    'settle-max-s': { type: 'string' },
    concurrency: { type: 'string', default: '32' },
    gate: { type: 'string' },
    'load-s': { type: 'string' },
    'warm-rounds': { type: 'string' },
    'export-rows': { type: 'string' },
    'skip-latency': { type: 'boolean', default: false },
    'skip-throughput': { type: 'boolean', default: false },
    'skip-export': { type: 'boolean', default: false },
    'warm-only': { type: 'boolean', default: false },
    'cold-snapshots': { type: 'boolean', default: false },
    'read-lanes': { type: 'string' },
    out: { type: 'string' },
  },
})

const quick = args.quick!
const preset = args.preset as PresetName
if (!Object.hasOwn(PRESETS, preset)) throw new Error(`--preset must be one of ${Object.keys(PRESETS).join(', ')}`)
const num = (v: string | undefined, fallback: number) => (v === undefined ? fallback : Number(v))
const REQUESTS = num(args.requests, quick ? 25 : 200)
const MIN_REQUESTS = num(args['min-requests'], quick ? 5 : 200)
const BUDGET_S = num(args['budget-s'], quick ? 5 : 60)
const WINDOWS = (args.windows ?? (quick ? '30d' : '7d,30d,90d')).split(',') as WindowName[]
const CONCURRENCY = num(args.concurrency, 32)
const LOAD_S = num(args['load-s'], quick ? 5 : 20)
const WARM_ROUNDS = num(args['warm-rounds'], quick ? 1 : 4)
const EXPORT_ROWS = num(args['export-rows'], quick ? 1_000_000 : 10_000_000)
const SETTLE_MAX_S = num(args['settle-max-s'], quick ? 120 : 900)

type WindowName = '7d' | '30d' | '90d'
const WINDOW_DAYS: Record<WindowName, number> = { '7d': 7, '30d': 30, '90d': 89 }

const load = () => loadavg().map((l) => round(l, 2))
const log = (...parts: unknown[]) => console.log(`[${new Date().toISOString().slice(11, 19)} load ${load().join(' ')}]`, ...parts)

// ---------------------------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------------------------
let dir = resolve(args.dir ?? process.env.QUARRY_BENCH_DIR ?? join(HERE, '.data', preset))
let plan = presetPlan(PRESETS[preset])
let dataNote = `preset ${preset}`
if (quick && !args.dir && !existsSync(dir)) {
  // No preset directory yet: quick mode seeds the same 100-project shape at 1M events.
  dir = join(HERE, '.data', 'quick-1m')
  plan = presetPlan(1_000_000)
  dataNote = 'preset 10m shape at 1M events (no 10m data directory found)'
}
mkdirSync(dir, { recursive: true })

const config = configSchema.parse({
  QUARRY_DATA_DIR: dir,
  QUARRY_DEMO: '0',
  LOG_LEVEL: 'info',
  QUARRY_RATE_LIMIT: '1000000000',
  QUARRY_AUTH_FAILURE_LIMIT: '1000000000',
  QUARRY_QUERY_TIMEOUT_S: '60',
  QUARRY_MAX_QUEUED_QUERIES: '1024',
  ...(args.gate ? { QUARRY_MAX_CONCURRENT_QUERIES: args.gate } : {}),
  ...(args['read-lanes'] ? { QUARRY_READ_LANES: args['read-lanes'] } : {}),
})
// Access logs are written (the production cost of logging is part of the overhead), to /dev/null.
const logger = createLogger(process.env.BENCH_LOG ? 'debug' : 'info', pino.destination({ dest: process.env.BENCH_LOG ?? '/dev/null', sync: false }))
const startedAt = new Date()
const loadAtStart = load()
log(`data directory ${dir}`)
const rt: Runtime = await openRuntime(config, logger)

const scalar = async <T = number>(sql: string, params: Record<string, unknown> = {}): Promise<T> => {
  const [row] = await rt.runner.rows<{ v: T }>({ name: 'bench_scalar', sql, params }, { timeoutS: 600 })
  return row!.v
}

let seeded: { seconds: number; events: number } | undefined
const total = plan.reduce((n, p) => n + p.events, 0)
if (Number(await scalar('SELECT count() AS v FROM events')) < total) {
  log(`seeding ${plan.length} projects, ${total.toLocaleString()} events (90 days)`)
  const started = performance.now()
  const end = new Date()
  const r = await seedPlan(rt.runner, plan, { seed: 1, end }, async (id) => {
    if (!(await findProject(rt.runner, id))) await createProject(rt.runner, { id, name: id, timezone: 'UTC', organizationId: 'default' })
  })
  seeded = { seconds: round((performance.now() - started) / 1000, 1), events: r.events }
  log(`seeded in ${seeded.seconds} s`)
}

const peerBuild = await buildPeer(rt)
log(`peer table: ${peerBuild.sessions.toLocaleString()} sessions${peerBuild.built ? ` built in ${peerBuild.seconds} s` : ' (kept)'}`)
const settled = await settle(rt, { optimize: args.optimize!, maxWaitS: SETTLE_MAX_S, tables: ['events', 'sessions', 'bench_openpanel.sessions'] })
log(`settle: ${JSON.stringify(settled)}`)

const engineVersion = await scalar<string>('SELECT version() AS v')
const sizes = await rt.runner.rows<{ id: string; events: number }>(
  { name: 'bench_sizes', sql: 'SELECT project_id AS id, count() AS events FROM events GROUP BY id ORDER BY events DESC, id', params: {} },
  { timeoutS: 600 },
)
const largest = sizes[0]!
const median = sizes[Math.floor(sizes.length / 2)]!
const projects = { L: largest, M: median }
const dataEnd = await scalar<string>('SELECT toString(max(created_at)) AS v FROM events')
const anchorDay = dataEnd.slice(0, 10)
const day = (offset: number) => new Date(Date.parse(`${anchorDay}T00:00:00Z`) - offset * 86_400_000).toISOString().slice(0, 10)
log(`engine ${engineVersion}; ${sizes.length} projects; L ${largest.id} (${largest.events}), M ${median.id} (${median.events}); data ends ${dataEnd}`)

// ---------------------------------------------------------------------------------------------
// Servers: one without the response cache (latency, uncached load), one with it.
// ---------------------------------------------------------------------------------------------
const root = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'default', name: 'bench-root' })
const headers = { 'openpanel-client-id': root.id, 'openpanel-client-secret': root.secret }
// Breakdowns, /metrics, /pages and charts read the sealed history as under `quarry serve`
// (QUARRY_SEALED=0 reads sessions and events); the measured projects are sealed first, so the latency
// table does not time their builds. Their clock is half an hour past the data's last event, so that,
// as under live traffic, each request reads the hour of events after C; by the wall clock, data
// seeded hours ago would leave none.
const rollupClock = new Date(Date.parse(`${dataEnd.replace(' ', 'T')}Z`) + 30 * 60_000)
const roles = args.projects!.split(',') as ('M' | 'L')[]
const sealed = configuredSealedHistory(config, { runner: rt.runner, logger, now: () => rollupClock })
const sealBuildMs: Partial<Record<'M' | 'L', number>> = {}
for (const role of sealed ? roles : []) {
  const started = performance.now()
  await sealed!.build(projects[role].id)
  sealBuildMs[role] = round(performance.now() - started, 0)
  log(`${role} sealed history built in ${sealBuildMs[role]} ms`)
}
// The uncached phase's profile: which statements its requests cost.
const tally = tallyStatements(rt.runner)
const appDeps = { config, runner: tally.runner, logger, signingKey: rt.signingKey, sealed }
const cache = createResponseCache({ now: () => new Date(), watermark: eventsWatermark(rt.runner) })
const plainServer = await listen(buildApp({ ...appDeps, responseCache: false }), '127.0.0.1', 0)
const cachedServer = await listen(buildApp({ ...appDeps, responseCache: cache }), '127.0.0.1', 0)
const PLAIN = `http://127.0.0.1:${plainServer.port}`
const CACHED = `http://127.0.0.1:${cachedServer.port}`
const keepAlive = agent(4)

/** Window parameters anchored on the data's last day, so a run on a later date measures the same rows. */
function windowQuery(w: WindowName, kind: 'insights' | 'export'): Record<string, string> {
  return kind === 'export' ? { start: day(WINDOW_DAYS[w]), end: anchorDay } : { startDate: day(WINDOW_DAYS[w]), endDate: anchorDay }
}
const enc = (q: Record<string, string>) => new URLSearchParams(q).toString()
const CHART_SERIES = JSON.stringify([{ name: 'screen_view' }])

const AGGREGATE = ['metrics', 'pages', ...DIMENSIONS.map((d) => d.name)]
const ENDPOINTS = args.endpoints?.split(',') ?? [...AGGREGATE, 'export_events', 'export_events_deep', 'export_charts']

function pathFor(endpoint: string, project: string, w: WindowName): string {
  switch (endpoint) {
    case 'live':
      return `/insights/${project}/live`
    case 'export_events':
    case 'export_events_deep':
      return `/export/events?${enc({ projectId: project, ...windowQuery(w, 'export'), limit: '50' })}`
    case 'export_charts':
      return `/export/charts?${enc({ projectId: project, ...windowQuery(w, 'insights'), interval: 'day', series: CHART_SERIES })}`
    default:
      // Ten rows, as the lists answered by default when the recorded results were measured (the
      // default is now OpenPanel's 1000); /metrics ignores limit.
      return `/insights/${project}/${endpoint}?${enc({ ...windowQuery(w, 'insights'), ...(endpoint === 'metrics' ? {} : { limit: '10' }) })}`
  }
}

async function fetchJson(url: string): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const r = await get(url, headers, keepAlive)
  return { status: r.status, body: r.status === 200 ? JSON.parse(r.body.toString()) : r.body.toString(), headers: r.headers }
}

/** A cursor deep in the window: pages of 1000 followed until half the rows (at most 100 pages). */
async function deepCursorPath(path: string): Promise<{ path: string; depth: number }> {
  const first = await fetchJson(`${PLAIN}${path.replace('limit=50', 'limit=1000')}`)
  if (first.status !== 200) throw new Error(`${path}: ${first.status} ${first.body}`)
  const target = Math.min(Math.floor(first.body.meta.totalCount / 2), 100_000)
  let cursor: string | null = first.body.meta.nextCursor
  let depth = first.body.data.length
  while (cursor && depth < target) {
    const page = await fetchJson(`${PLAIN}${path.replace('limit=50', 'limit=1000')}&cursor=${encodeURIComponent(cursor)}`)
    depth += page.body.data.length
    cursor = page.body.meta.nextCursor
  }
  return { path: `${path}&cursor=${encodeURIComponent(cursor ?? '')}`, depth }
}

interface Explained {
  sql: string[]
  params: Record<string, unknown>
}
async function explain(path: string): Promise<Explained> {
  const r = await fetchJson(`${PLAIN}${path}${path.includes('?') ? '&' : '?'}explain=sql`)
  if (r.status !== 200) throw new Error(`explain ${path}: ${r.status} ${r.body}`)
  return r.body as Explained
}

export interface LatencyCell {
  role: 'M' | 'L'
  project: string
  window: WindowName | '-'
  endpoint: string
  path: string
  n: number
  http: Summary
  db: Summary
  bare: Summary
  peer?: Summary
  overhead_p50_ms: number
  overhead_ratio: number
  paired_overhead_p50_ms: number
  peer_over_bare?: number
  peer_over_http?: number
  /** Whether every timed answer read the sealed history (X-Quarry-Sealed-Until); absent when none did. */
  from_sealed?: boolean
  load: number[]
  note?: string
}

async function measureCell(role: 'M' | 'L', project: string, window: WindowName | '-', endpoint: string, path: string, note?: string): Promise<LatencyCell> {
  // One real request first: explain=sql decides as the planners last saw the data, and until a
  // request has checked a build (the sealed history) it lists the statement without it.
  await get(`${PLAIN}${path}`, headers, keepAlive)
  const ex = await explain(path)
  const bareStatements = ex.sql.map((sql) => ({ sql, params: ex.params }))
  const peer = peerFor(endpoint, project, ex.params)
  const http: number[] = []
  const db: number[] = []
  const bare: number[] = []
  const peerMs: number[] = []
  const paired: number[] = []
  let fromSealed = 0
  let failure: string | undefined
  const started = performance.now()
  for (let i = 0; ; i++) {
    const elapsed = (performance.now() - started) / 1000
    const done = i - 2
    if (done >= REQUESTS || (done >= MIN_REQUESTS && elapsed > BUDGET_S)) break
    // Interleaved, in a rotating order: each iteration sees the same machine for all three.
    let h = 0
    let b = 0
    const steps: (() => Promise<void>)[] = [
      async () => {
        const r = await get(`${PLAIN}${path}`, headers, keepAlive)
        if (r.status !== 200) {
          failure = `HTTP ${r.status}: ${r.body.toString().slice(0, 200)}`
          return
        }
        h = r.ms
        if (i >= 2) {
          http.push(r.ms)
          db.push(Number(/db;dur=([\d.]+)/.exec(String(r.headers['server-timing'] ?? ''))?.[1] ?? NaN))
          if (r.headers['x-quarry-sealed-until'] !== undefined) fromSealed++
        }
      },
      async () => {
        b = await runBare(rt, bareStatements)
        if (i >= 2) bare.push(b)
      },
    ]
    if (peer) steps.push(async () => {
      const p = await runBare(rt, peer)
      if (i >= 2) peerMs.push(p)
    })
    for (let k = 0; k < steps.length && !failure; k++) await steps[(i + k) % steps.length]!()
    if (failure) break
    if (i >= 2) paired.push(h - b)
  }
  const cell: LatencyCell = {
    role,
    project,
    window,
    endpoint,
    path,
    n: http.length,
    http: summarize(http),
    db: summarize(db),
    bare: summarize(bare),
    ...(peer ? { peer: summarize(peerMs) } : {}),
    overhead_p50_ms: 0,
    overhead_ratio: 0,
    paired_overhead_p50_ms: round(quantile(paired, 0.5), 2),
    ...(fromSealed > 0 ? { from_sealed: fromSealed === http.length } : {}),
    load: load(),
    ...(note || failure ? { note: [note, failure && `stopped: ${failure}`].filter(Boolean).join('; ') } : {}),
  }
  cell.overhead_p50_ms = round(cell.http.p50 - cell.bare.p50, 2)
  cell.overhead_ratio = round(cell.http.p50 / cell.bare.p50, 2)
  if (cell.peer) {
    cell.peer_over_bare = round(cell.peer.p50 / cell.bare.p50, 2)
    cell.peer_over_http = round(cell.peer.p50 / cell.http.p50, 2)
  }
  log(
    `${role} ${window.padEnd(3)} ${endpoint.padEnd(18)} n=${String(cell.n).padStart(3)} http p50 ${cell.http.p50} p99 ${cell.http.p99} | bare p50 ${cell.bare.p50}` +
      ` | overhead ${cell.paired_overhead_p50_ms} ms${cell.peer ? ` | peer p50 ${cell.peer.p50} (${cell.peer_over_bare}x bare)` : ''}`,
  )
  return cell
}

// ---------------------------------------------------------------------------------------------
// Latency at concurrency 1
// ---------------------------------------------------------------------------------------------
const latency: LatencyCell[] = []
if (!args['skip-latency']) {
  for (const role of roles) {
    const project = projects[role].id
    if (!args.endpoints || ENDPOINTS.includes('live')) latency.push(await measureCell(role, project, '-', 'live', pathFor('live', project, '30d')))
    for (const w of WINDOWS) {
      for (const endpoint of ENDPOINTS.filter((e) => e !== 'live')) {
        let path = pathFor(endpoint, project, w)
        let note: string | undefined
        if (endpoint === 'export_events_deep') {
          const deep = await deepCursorPath(path)
          path = deep.path
          note = `cursor after ${deep.depth.toLocaleString()} rows`
        }
        latency.push(await measureCell(role, project, w, endpoint, path, note))
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Cache at concurrency 1, and throughput at concurrency 32
// ---------------------------------------------------------------------------------------------
interface LoadResult {
  name: string
  concurrency: number
  requests: number
  seconds: number
  rps: number
  latency: Summary
  statuses: Record<string, number>
  cache: Record<string, number>
  errors: unknown[]
  load: number[]
  note?: string
  /** Per answer, the statements of each name the phase ran, their ms from a gate slot on and with the wait for one: the uncached phase. */
  statements?: Tally
}

/** A tally divided by the answers: statements and their ms per answer, by name, the most costly first. */
const perAnswer = (t: Tally, answers: number): Tally =>
  Object.fromEntries(
    Object.entries(t)
      .sort((a, b) => b[1].ms - a[1].ms)
      .map(([name, { n, ms, engineMs }]) => [name, { n: round(n / Math.max(1, answers), 3), ms: round(ms / Math.max(1, answers), 2), engineMs: round(engineMs / Math.max(1, answers), 2) }]),
  )

const runWorker = (job: Record<string, unknown>) =>
  runLoadWorker<{ elapsedMs: number; latencies: number[]; statuses: Record<string, number>; cache: Record<string, number>; errors: unknown[] }>({ headers, ...job })

async function loadPhase(name: string, job: Record<string, unknown>, note?: string): Promise<LoadResult> {
  const r = await runWorker(job)
  const requests = r.latencies.length
  const result: LoadResult = {
    name,
    concurrency: Number(job.concurrency),
    requests,
    seconds: round(r.elapsedMs / 1000, 2),
    rps: round(requests / (r.elapsedMs / 1000), 1),
    latency: summarize(r.latencies),
    statuses: r.statuses,
    cache: r.cache,
    errors: r.errors,
    load: load(),
    ...(note ? { note } : {}),
  }
  log(`${name}: ${result.rps} req/s, p50 ${result.latency.p50} p99 ${result.latency.p99} ms, statuses ${JSON.stringify(r.statuses)}, cache ${JSON.stringify(r.cache)}`)
  return result
}

const cacheLatency: { name: string; latency: Summary; load: number[] }[] = []
const throughput: LoadResult[] = []
const warmRounds: { round: number; healthz_rps: number; warm_rps: number; ratio: number }[] = []
let warmRatio: { median: number; rounds: typeof warmRounds } | undefined
let stampede: { keys: number; single_c1: Summary; slowest_single_ms: number; result: LoadResult; p99_over_slowest: number } | undefined
if (!args['skip-throughput']) {
  const M = projects.M.id
  // Closed windows (the 30 days before the data's last day) live closedTtlMs in the cache; windows
  // reaching the present live nowTtlMs (5 s), after which one request per key runs the query again.
  const closed = (e: string, p: string) => pathFor(e, p, '30d').replace(`endDate=${anchorDay}`, `endDate=${day(1)}`).replace(`startDate=${day(30)}`, `startDate=${day(31)}`)
  const warmUrls = AGGREGATE.map((e) => `${CACHED}${closed(e, M)}`)
  const warmNowUrls = AGGREGATE.map((e) => `${CACHED}${pathFor(e, M, '30d')}`)
  for (const url of warmUrls) await get(url, headers, keepAlive)

  // Hits and revalidations at concurrency 1 (in process, like the latency table).
  const hit: number[] = []
  const notModified: number[] = []
  const hitUrl = warmUrls[0]!
  const etag = String((await get(hitUrl, headers, keepAlive)).headers.etag ?? '')
  for (let i = 0; i < 500; i++) {
    const r = await get(hitUrl, headers, keepAlive)
    if (r.headers['x-quarry-cache'] === 'hit') hit.push(r.ms)
    const n = await get(hitUrl, { ...headers, 'if-none-match': etag }, keepAlive)
    if (n.status === 304) notModified.push(n.ms)
  }
  cacheLatency.push({ name: 'cache hit, c=1', latency: summarize(hit), load: load() })
  cacheLatency.push({ name: 'If-None-Match → 304, c=1', latency: summarize(notModified), load: load() })
  log(`cache hit c=1 p50 ${cacheLatency[0]!.latency.p50} ms; 304 p50 ${cacheLatency[1]!.latency.p50} ms`)

  // The warm cache against `/healthz`, in rounds that alternate which goes first: one pair of
  // phases swung 0.44–0.76 from run to run (the load generator and the server share the cores, and
  // where each lands decides a phase), and a warm phase right after another came out lower than
  // one after `/healthz`. The ratio is the median (nearest rank: the lower middle of an even count)
  // of the rounds' own, an even number of rounds by default, so each order counts alike.
  for (let k = 1; k <= WARM_ROUNDS; k++) {
    const of = WARM_ROUNDS > 1 ? ` (round ${k} of ${WARM_ROUNDS})` : ''
    const ceiling = () =>
      loadPhase(
        `ceiling: GET /healthz, c=${CONCURRENCY}${of}`,
        { urls: [`${PLAIN}/healthz`], concurrency: CONCURRENCY, mode: 'shared', durationMs: LOAD_S * 1000 },
        'no authentication, no query: what the HTTP stack and the load generator reach on this machine',
      )
    const hits = () =>
      loadPhase(
        `warm cache, c=${CONCURRENCY}${of}`,
        { urls: warmUrls, concurrency: CONCURRENCY, mode: 'shared', durationMs: LOAD_S * 1000 },
        `${warmUrls.length} aggregate endpoints of ${M}, a closed 30-day window (${day(31)} … ${day(1)}), pre-warmed`,
      )
    let healthz: LoadResult, warm: LoadResult
    if (k % 2 === 1) {
      healthz = await ceiling()
      warm = await hits()
    } else {
      warm = await hits()
      healthz = await ceiling()
    }
    throughput.push(healthz, warm)
    warmRounds.push({ round: k, healthz_rps: healthz.rps, warm_rps: warm.rps, ratio: round(warm.rps / healthz.rps, 3) })
  }
  warmRatio = { median: round(quantile(warmRounds.map((w) => w.ratio), 0.5), 3), rounds: warmRounds }
  log(`warm / healthz by round: ${warmRounds.map((w) => w.ratio).join(', ')}; median ${warmRatio.median}`)
  throughput.push(
    await loadPhase(
      `warm cache, windows reaching now, c=${CONCURRENCY}`,
      { urls: warmNowUrls, concurrency: CONCURRENCY, mode: 'shared', durationMs: LOAD_S * 1000 },
      `the same endpoints, 30d up to the data's last day: entries live 5 s, then one request per key (the others coalesce) runs the query again`,
    ),
  )

  if (!args['warm-only']) {
  // Uncached: random medium and small projects (the median and every smaller one), random aggregate endpoint, 30d.
  const small = sizes.slice(Math.floor(sizes.length / 2)).map((s) => s.id)
  let seed = 7
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
  // Sealed first, as under `quarry serve` once each has been asked once: the phase times requests,
  // not the builds their first requests would schedule (at the twelfth stop it timed those: 175
  // answers in 10 s). A build still valid on disk is kept. Then, unless --cold-snapshots, each
  // project is asked each endpoint of the phase once, so that the snapshots of the events after C
  // the routes read are written: the phase does not time 50 projects' first writes (at the
  // fifteenth stop they were most of its 10 s).
  const sealingStarted = performance.now()
  for (const id of sealed ? small : []) {
    await sealed!.forRequest(id, { runner: rt.runner })
    await sealed!.settled(id)
    if (args['cold-snapshots']) continue
    for (const endpoint of AGGREGATE) await get(`${PLAIN}${pathFor(endpoint, id, '30d')}`, headers, keepAlive)
    await sealed!.snapshotsWritten(id)
  }
  if (sealed) log(`${small.length} M/S projects sealed (or their builds still valid)${args['cold-snapshots'] ? '' : ', their snapshots written,'} in ${round((performance.now() - sealingStarted) / 1000, 1)} s`)
  const uncachedUrls = Array.from({ length: 5000 }, () => `${PLAIN}${pathFor(AGGREGATE[Math.floor(rand() * AGGREGATE.length)]!, small[Math.floor(rand() * small.length)]!, '30d')}`)
  tally.start()
  const uncached = await loadPhase(
    `uncached, c=${CONCURRENCY}`,
    { urls: uncachedUrls, concurrency: CONCURRENCY, mode: 'shared', durationMs: LOAD_S * 1000 },
    `random aggregate endpoint × random project among the ${small.length} at or below the median size, 30d, no response cache`,
  )
  uncached.statements = perAnswer(tally.stop(), uncached.statuses['200'] ?? 0)
  log(`uncached, per answer: ${Object.entries(uncached.statements).map(([name, t]) => `${name} ${t.n} statements (${t.engineMs} ms from the gate's slot on, ${t.ms} with the wait for it)`).join(', ')}`)
  throughput.push(uncached)

  // Cold stampede: 99 keys (33 M/S projects × metrics, referrer_name, country), every client asks for every key.
  const stampedeProjects = small.slice(0, 33)
  const keys = stampedeProjects.flatMap((p) => ['metrics', 'referrer_name', 'country'].map((e) => closed(e, p)))
  const single: number[] = []
  for (const path of keys) single.push((await get(`${PLAIN}${path}`, headers, keepAlive)).ms)
  cache.clear()
  const result = await loadPhase(
    `cold stampede, c=${CONCURRENCY} over ${keys.length} keys`,
    { urls: keys.map((k) => `${CACHED}${k}`), concurrency: CONCURRENCY, mode: 'stampede' },
    `each client requests all ${keys.length} keys (closed 30-day window) once in its own shuffled order, on an empty cache`,
  )
  throughput.push(result)
  stampede = {
    keys: keys.length,
    single_c1: summarize(single),
    slowest_single_ms: round(Math.max(...single), 1),
    result,
    p99_over_slowest: round(result.latency.p99 / Math.max(...single), 2),
  }
  }
}

await plainServer.shutdown(1000)
await cachedServer.shutdown(1000)
keepAlive.destroy()
const parts = settled.parts
await rt.close()

// ---------------------------------------------------------------------------------------------
// Export throughput: benchmarks/export-stream.ts in its own process and data directory.
// ---------------------------------------------------------------------------------------------
let exportReport: unknown
if (!args['skip-export']) {
  log(`export benchmark over ${EXPORT_ROWS.toLocaleString()} rows`)
  // export-stream.ts writes its own results file; keep whatever was there (the report embeds the new figures).
  const file = join(HERE, 'results', `export-stream-${EXPORT_ROWS >= 1_000_000 ? `${EXPORT_ROWS / 1_000_000}M` : EXPORT_ROWS}.json`)
  const before = existsSync(file) ? readFileSync(file) : undefined
  const code = await new Promise<number>((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(HERE, 'export-stream.ts'), '--rows', String(EXPORT_ROWS)], { stdio: 'inherit' })
    child.on('exit', (c) => done(c ?? 1))
  })
  exportReport = code === 0 && existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { error: `export-stream.ts exited with ${code}` }
  if (before) writeFileSync(file, before)
}

const report = {
  date: startedAt.toISOString(),
  finished: new Date().toISOString(),
  mode: quick ? 'quick' : 'full',
  machine: { cores: cpus().length, cpu: cpus()[0]?.model, memory_gb: Math.round(totalmem() / 2 ** 30), node: process.version },
  engine: { mode: rt.engine.mode, version: engineVersion, gate_concurrency: config.QUARRY_MAX_CONCURRENT_QUERIES, read_lanes: config.QUARRY_READ_LANES },
  data: {
    note: dataNote,
    dir,
    events: sizes.reduce((n, s) => n + s.events, 0),
    projects: sizes.length,
    L: largest,
    M: median,
    data_end: dataEnd,
    windows: Object.fromEntries(WINDOWS.map((w) => [w, `${day(WINDOW_DAYS[w])} … ${anchorDay} (whole days, UTC)`])),
    seeded_now: seeded,
    peer_table: peerBuild,
    sealed: sealed ? { clock: rollupClock.toISOString(), build_ms: sealBuildMs } : null,
    settle: { ...settled, parts },
  },
  settings: { requests: REQUESTS, min_requests: MIN_REQUESTS, budget_s: BUDGET_S, concurrency: CONCURRENCY, load_s: LOAD_S, export_rows: EXPORT_ROWS },
  load_average: { start: loadAtStart, end: load() },
  latency,
  cache: cacheLatency,
  throughput,
  warm_ratio: warmRatio,
  stampede,
  export: exportReport,
}
const name = args.out ?? `bench-${quick ? `${preset}-quick` : preset}`
const files = writeReport(join(HERE, 'results'), name, report)
log(`written ${files.join(', ')}`)
process.exit(0)
