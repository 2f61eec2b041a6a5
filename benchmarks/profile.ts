/**
 * Where a route's time goes, from the engine's own log. Each statement the route runs (explain=sql)
 * is timed in process (median of --runs, as the bench's "bare"), then run once more in a child
 * process with send_logs_level = 'trace'; the log lines that account for the time are kept: the
 * parts and marks the primary key selected, the rows about to be read, each aggregation, sort,
 * set and join, each with its offset from the start of its statement. The traced run is the first
 * in a fresh process, with cold caches and the cost of logging, so its offsets run higher than the
 * median; they show proportions.
 *
 *   npx tsx benchmarks/profile.ts --dir D --project p001 [--days 30] [--endpoints metrics,pages,country,export_charts] [--peer] [--runs 5] [--out NAME]
 *
 * The window is the bench's: whole days up to the last day of the directory's data. --peer adds
 * OpenPanel's SQL for the same breakdowns and /metrics (lib/peer.ts; its table is built first if
 * missing). With --out the report is also written to results/NAME.md.
 */
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import pino from 'pino'
import { buildApp } from '../src/app.ts'
import { createClientRow } from '../src/auth/clients.ts'
import { configSchema } from '../src/config.ts'
import { createLogger } from '../src/log.ts'
import { openRuntime } from '../src/runtime.ts'
import { runBare } from './lib/bare.ts'
import { buildPeer, peerFor, type PeerStatement } from './lib/peer.ts'
import { quantile, round } from './lib/stats.ts'

const { values: args } = parseArgs({
  options: {
    dir: { type: 'string' },
    project: { type: 'string', default: 'p051' },
    days: { type: 'string', default: '30' },
    endpoints: { type: 'string', default: 'metrics,pages,country' },
    peer: { type: 'boolean', default: false },
    runs: { type: 'string', default: '5' },
    out: { type: 'string' },
  },
})
if (!args.dir) throw new Error('--dir is required')
const project = args.project!
const config = configSchema.parse({ QUARRY_DATA_DIR: args.dir, QUARRY_DEMO: '0', LOG_LEVEL: 'warn', QUARRY_RATE_LIMIT: '1000000000' })
const rt = await openRuntime(config, createLogger('warn', pino.destination({ dest: '/dev/null', sync: false })))

const [last] = await rt.runner.rows<{ day: string; events: number }>(
  {
    name: 'profile_extent',
    sql: 'SELECT (SELECT toString(toDate(max(created_at))) FROM events) AS day, count() AS events FROM events WHERE project_id = {p:String}',
    params: { p: project },
  },
  { timeoutS: 600 },
)
if (!last || last.events === 0) throw new Error(`project ${project} has no events in ${args.dir}`)
const day = (offset: number) => new Date(Date.parse(`${last.day}T00:00:00Z`) - offset * 86_400_000).toISOString().slice(0, 10)
const window = new URLSearchParams({ startDate: day(Number(args.days)), endDate: last.day })

if (args.peer) await buildPeer(rt)
const root = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'default', name: 'profile-root' })
const app = buildApp({ config, runner: rt.runner, logger: rt.logger, signingKey: rt.signingKey, responseCache: false })

interface Route {
  label: string
  statements: PeerStatement[]
  medianMs?: number
}
const routes: Route[] = []
/** The bench's requests: an insights route, or export_charts with one series of screen views by day. */
const pathFor = (endpoint: string) =>
  endpoint === 'export_charts'
    ? `/export/charts?${new URLSearchParams({ projectId: project, ...Object.fromEntries(window), interval: 'day', series: JSON.stringify([{ name: 'screen_view' }]) })}`
    : `/insights/${project}/${endpoint}?${window}`
for (const endpoint of args.endpoints!.split(',')) {
  const res = await app.request(`${pathFor(endpoint)}&explain=sql`, {
    headers: { 'openpanel-client-id': root.id, 'openpanel-client-secret': root.secret },
  })
  if (res.status !== 200) throw new Error(`${endpoint}: ${res.status} ${await res.text()}`)
  const explained = (await res.json()) as { sql: string[]; params: Record<string, unknown> }
  routes.push({ label: endpoint, statements: explained.sql.map((sql) => ({ sql, params: explained.params })) })
  const peer = args.peer ? peerFor(endpoint, project, explained.params) : undefined
  if (peer) routes.push({ label: `${endpoint} (peer: OpenPanel's SQL)`, statements: peer })
}

const runs = Number(args.runs)
for (const route of routes) {
  const times: number[] = []
  for (let i = 0; i <= runs; i++) {
    const ms = await runBare(rt, route.statements)
    if (i > 0) times.push(ms)
  }
  route.medianMs = round(quantile(times, 0.5), 1)
}
const loadAfterTiming = loadavg().map((l) => round(l, 2))
await rt.close()

/** Log lines that say where time and rows went; the rest is planning chatter. */
const KEPT = [
  /Selected \d+\/\d+ parts by partition key/,
  /Reading approx\. \d+ rows/,
  /Aggregated\. \d+ to \d+ rows/,
  /Merging aggregated data|Converting aggregated data/,
  /Created Set with \d+ entries/,
  /Join data is built/,
  /(Merge|Partial)SortingTransform|MergingSortedTransform|WindowTransform/,
]
const LINE = /^\S* ?\d{4}\.\d\d\.\d\d (\d\d):(\d\d):(\d\d\.\d+) \[ *\d+ *\] \{([^}]*)\} <\w+> (.*)$/

interface Traced {
  elapsedS: number
  lines: string[]
}

/** Each statement's figures and the kept lines of its trace, in the order the statements ran. */
async function trace(statements: PeerStatement[]): Promise<Traced[]> {
  const child = spawn(process.execPath, [new URL('./lib/trace-worker.mjs', import.meta.url).pathname], { stdio: ['pipe', 'pipe', 'pipe'] })
  child.stdin.end(JSON.stringify({ dir: args.dir, database: config.CLICKHOUSE_DATABASE, statements }))
  let out = ''
  let log = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (log += d))
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  if (code !== 0) throw new Error(`trace worker exited with ${code}:\n${log.slice(-2000)}`)
  const byQuery = new Map<string, { startS: number; first: string; lines: string[] }>()
  for (const raw of log.split('\n')) {
    const m = LINE.exec(raw)
    if (!m) continue
    const [, h, min, s, queryId, message] = m
    const atS = Number(h) * 3600 + Number(min) * 60 + Number(s)
    let q = byQuery.get(queryId!)
    if (!q) byQuery.set(queryId!, (q = { startS: atS, first: message!, lines: [] }))
    if (KEPT.some((re) => re.test(message!))) q.lines.push(`+${String(Math.round((atS - q.startS) * 1000)).padStart(5)} ms  ${message}`)
  }
  // The worker's own USE comes first and is not one of the statements.
  const queries = [...byQuery.values()].filter((q) => !/\) USE /.test(q.first))
  const figures = out.trim().split('\n').map((l) => JSON.parse(l) as Omit<Traced, 'lines'>)
  return figures.map((f, i) => ({ ...f, lines: queries[i]?.lines ?? [] }))
}

const report: string[] = [
  `# Profile: ${project} (${last.events.toLocaleString('en-US')} events), ${window.get('startDate')} … ${window.get('endDate')}`,
  '',
  `Data directory \`${args.dir}\`; median of ${runs} in-process runs per route; load after timing ${loadAfterTiming.join(' ')}.`,
  'Each line: milliseconds since the statement began, then the engine\'s log message. The traced run is the first in a fresh process (cold caches, logging on), so it runs slower than the median; read it for proportions.',
]
for (const route of routes) {
  report.push('', `## ${route.label}: ${route.medianMs} ms`, '')
  const traces = await trace(route.statements)
  traces.forEach((t, i) => {
    report.push(`statement ${i + 1} of ${traces.length}: ${round(t.elapsedS * 1000, 1)} ms with the trace on`, '```', ...t.lines, '```')
  })
}
const text = `${report.join('\n')}\n`
process.stdout.write(text)
if (args.out) writeFileSync(new URL(`./results/${args.out}.md`, import.meta.url), text)
