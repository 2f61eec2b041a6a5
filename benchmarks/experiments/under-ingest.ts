/**
 * The sealed routes while events arrive: one client asks /metrics, /pages, a breakdown and
 * /export/charts in turn (cache off, in process), in phases that alternate between quiet and a
 * stream of small inserts after C (a copy of the project's last event under a new id every
 * INTERVAL_MS, inserted as a row the way loaders write a live project; C and the data's clock
 * stay). bench.ts inserts nothing, so every request it times reads the planner's snapshots of the part after C; under a
 * stream each insert is a new state, written at most every 2 s, and requests in between compute
 * their part, unless they may read an earlier state's (`liveLagMs`). Each round runs a quiet and a
 * streaming phase per lag in LAGS (ms, comma-separated; each its own sealed history over the one
 * engine). Per lag, route and phase kind: p50 and p90 of wall, and how many requests read
 * snapshots (their statement reads sealed_live*) and how many of those an earlier state's.
 *
 *   npx tsx benchmarks/experiments/under-ingest.ts DIR PROJECT [ROUNDS] [PHASE_S] [INTERVAL_MS] [LAGS]
 */
import { randomUUID } from 'node:crypto'
import { loadavg } from 'node:os'
import type { QueryRunner, RunOptions, Statement } from '../../src/clickhouse/run.ts'
import { sealedApp, sealedProjectApp } from '../lib/sealed-project.ts'
import { quantile } from '../lib/stats.ts'

const [dir, project, roundsArg = '3', phaseSArg = '15', intervalArg = '1000', lagsArg = '0,3000'] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: under-ingest.ts DIR PROJECT [ROUNDS] [PHASE_S] [INTERVAL_MS] [LAGS]')
const rounds = Number(roundsArg)
const phaseMs = Number(phaseSArg) * 1000
const intervalMs = Number(intervalArg)
const lags = lagsArg.split(',').map(Number)
const opened = await sealedProjectApp(dir, project, 'under-ingest', { liveLagMs: lags[0] })
const { rt, headers } = opened
// Read once: selecting the newest of L's 15M events per insert held chDB's line ~380 ms each time.
const [last] = await (await rt.engine.client.query({ query: 'SELECT * FROM events WHERE project_id = {p:String} ORDER BY created_at DESC LIMIT 1', query_params: { p: project }, format: 'JSONEachRow' })).json<Record<string, unknown>>()
const insertCopy = () => rt.engine.client.insert({ table: 'events', values: [{ ...last, id: randomUUID() }], format: 'JSONEachRow' })
// The first lag's app is the one opened with the project; each further lag gets its own.
const variants = lags.map((liveLagMs, i) => ({ lag: liveLagMs, ...(i === 0 ? opened : sealedApp(opened, { liveLagMs })) }))

// Which statement each request ran last: the route's own tells whether it read a snapshot. And
// per phase kind, each statement's count and wall ms summed (a statement's wall includes its wait
// in chDB's queue; background writes run beside the line).
let lastRouteSql = ''
let phaseKind = ''
const statements = new Map<string, { n: number; ms: number }>()
const runner = rt.runner as QueryRunner
for (const method of ['rows', 'command'] as const) {
  const original = (runner[method] as (...a: unknown[]) => Promise<unknown>).bind(runner)
  ;(runner as unknown as Record<string, unknown>)[method] = (stmt: Statement, opts?: RunOptions & { background?: string }) => {
    if (method === 'rows' && /^(insights|export)_/.test(stmt.name)) lastRouteSql = stmt.sql
    const t = performance.now()
    return original(stmt, opts).finally(() => {
      const key = `${phaseKind}|${opts?.background ? `${stmt.name} (${opts.background})` : stmt.name}`
      const s = statements.get(key) ?? { n: 0, ms: 0 }
      statements.set(key, { n: s.n + 1, ms: s.ms + performance.now() - t })
    })
  }
}

const chart = new URLSearchParams({ projectId: project, range: '30d', interval: 'day', series: JSON.stringify([{ name: 'screen_view', segment: 'event' }]) })
const routes: Record<string, string> = {
  metrics: `/insights/${project}/metrics?range=30d`,
  pages: `/insights/${project}/pages?range=30d`,
  country: `/insights/${project}/country?range=30d`,
  charts: `/export/charts?${chart}`,
}
type Cell = { ms: number[]; snapshot: number; lagging: number }
const cells = new Map<string, Cell>()
const cell = (key: string) => cells.get(key) ?? (cells.set(key, { ms: [], snapshot: 0, lagging: 0 }).get(key) as Cell)

let inserts = 0
const loads: number[] = []
// Each variant's first quiet phase warms it up (snapshots written, caches filled): not counted.
const phases = [...lags.map((_, v) => ({ v, streaming: false, warm: true })), ...Array.from({ length: rounds }, () => lags.flatMap((_, v) => [false, true].map((streaming) => ({ v, streaming, warm: false })))).flat()]
for (const { v, streaming, warm } of phases) {
  const { app, sealed, lag } = variants[v]!
  const kind = warm ? 'warm-up' : `${lag}|${streaming ? 'inserts' : 'quiet'}`
  phaseKind = kind
  let stop = false
  const stream = streaming
    ? (async () => {
        while (!stop) {
          const t = performance.now()
          const t0 = performance.now()
          await insertCopy()
          const s = statements.get(`${kind}|insert (a row)`) ?? { n: 0, ms: 0 }
          statements.set(`${kind}|insert (a row)`, { n: s.n + 1, ms: s.ms + performance.now() - t0 })
          inserts++
          await new Promise((r) => setTimeout(r, Math.max(0, intervalMs - (performance.now() - t))))
        }
      })()
    : Promise.resolve()
  loads.push(loadavg()[0]!)
  const end = performance.now() + phaseMs
  while (performance.now() < end) {
    for (const [route, path] of Object.entries(routes)) {
      lastRouteSql = ''
      const t = performance.now()
      const res = await app.request(`http://q${path}`, { headers })
      await res.arrayBuffer()
      if (res.status !== 200) throw new Error(`${route}: ${res.status}`)
      if (warm) continue
      const c = cell(`${route}|${kind}`)
      c.ms.push(performance.now() - t)
      if (/FROM sealed_live/.test(lastRouteSql)) c.snapshot++
      if (res.headers.has('x-quarry-live-as-of')) c.lagging++
    }
  }
  stop = true
  await stream
  // The next phase starts settled: the writes the last inserts started are done.
  await sealed.snapshotsWritten(project)
}
console.log(`${project}: ${rounds} rounds of a quiet and a streaming phase of ${phaseSArg} s per lag, an insert every ${intervalMs} ms while streaming (${inserts} in all); load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}\n`)
console.log('| lag ms | route | quiet p50 / p90 ms | snapshots read | inserts p50 / p90 ms | snapshots read (earlier state) |\n|--:|---|--:|--:|--:|--:|')
for (const lag of lags) {
  for (const route of Object.keys(routes)) {
    const text = (kind: string) => {
      const c = cell(`${route}|${lag}|${kind}`)
      return `${quantile(c.ms, 0.5).toFixed(1)} / ${quantile(c.ms, 0.9).toFixed(1)} | ${c.snapshot} of ${c.ms.length}${kind === 'inserts' ? ` (${c.lagging})` : ''}`
    }
    console.log(`| ${lag} | ${route} | ${text('quiet')} | ${text('inserts')} |`)
  }
}
console.log('\nStatements while streaming, per lag: count and wall ms summed, the largest first\n')
for (const lag of lags) {
  const prefix = `${lag}|inserts|`
  const mine = [...statements].filter(([k]) => k.startsWith(prefix)).sort((a, b) => b[1].ms - a[1].ms)
  console.log(`lag ${lag}: ${mine.map(([k, s]) => `${k.slice(prefix.length)} ${s.n} × ${Math.round(s.ms / s.n)} = ${Math.round(s.ms)}`).join('; ')}\n`)
}
await rt.close()
