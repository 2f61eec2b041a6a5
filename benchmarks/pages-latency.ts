/**
 * /pages from the sealed history against /pages from the events, over windows of every kind: whole
 * UTC days, a zone's midnights (whole-hour and half-hour offsets), unaligned ISO instants, and
 * windows that end before C. Both apps run in this process on the same engine, the sealed one on a
 * build made first (or reused) with its clock pinned half an hour past the project's last event, so
 * each request also reads the events after C. Every pair of answers must be identical (the run stops
 * otherwise); requests are interleaved round by round, the order rotating.
 *   npx tsx benchmarks/pages-latency.ts --dir DIR --project ID [--runs 15] [--reuse] [--out NAME]
 */
import { writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { isDeepStrictEqual, parseArgs } from 'node:util'
import pino from 'pino'
import { buildApp } from '../src/app.ts'
import { createClientRow } from '../src/auth/clients.ts'
import { SealedHistory } from '../src/services/sealed/index.ts'
import { openSealedProject } from './lib/sealed-project.ts'
import { round } from './lib/stats.ts'

const { values } = parseArgs({
  options: { dir: { type: 'string' }, project: { type: 'string' }, runs: { type: 'string', default: '15' }, reuse: { type: 'boolean', default: false }, out: { type: 'string' } },
})
if (!values.dir || !values.project) throw new Error('usage: pages-latency.ts --dir DIR --project ID [--runs N] [--reuse] [--out NAME]')
const project = values.project
const runs = Number(values.runs)
const { rt, clock } = await openSealedProject(values.dir, project, values.reuse!)
const logger = pino({ level: 'warn' })
const now = () => clock.toJSDate()
const config = { ...rt.config, QUARRY_RATE_LIMIT: 1_000_000, QUARRY_QUERY_TIMEOUT_S: 60 }
const sealed = new SealedHistory({ runner: rt.runner, logger, now, queryTimeoutS: 60, rebuildIntervalMs: 3_600_000 })
const common = { config, runner: rt.runner, logger, signingKey: rt.signingKey, now, responseCache: false as const, metrics: false as const }
const apps = { sealed: buildApp({ ...common, sealed }), events: buildApp(common) }
const client = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'default', name: 'pages-bench' })
const headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }

const iso = (t: typeof clock) => t.toISO({ suppressMilliseconds: false })!
const WINDOWS: Record<string, string> = {
  '30d UTC': 'range=30d',
  '7d UTC': 'range=7d',
  '30d America/New_York': 'range=30d&timezone=America/New_York',
  '30d Asia/Kolkata': 'range=30d&timezone=Asia/Kolkata',
  'yesterday UTC (ends before C)': 'range=yesterday',
  'unaligned ISO instants, to the present': `startDate=${iso(clock.minus({ days: 30, minutes: 7, seconds: 33 }))}&endDate=${iso(clock.plus({ hours: 1 }))}`,
  'unaligned ISO instants, ending 2 days before C': `startDate=${iso(clock.minus({ days: 20, hours: 5, minutes: 7 }))}&endDate=${iso(clock.minus({ days: 2, hours: 3, minutes: 41 }))}`,
}

async function ask(app: keyof typeof apps, query: string) {
  const started = performance.now()
  const res = await apps[app].request(`http://quarry.bench/insights/${project}/pages?${query}&limit=1000`, { headers })
  const body = await res.json()
  const ms = performance.now() - started
  if (res.status !== 200) throw new Error(`${app} ${query}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`)
  const db = Number(/db;dur=([\d.]+)/.exec(res.headers.get('server-timing') ?? '')?.[1] ?? NaN)
  return { ms, db, body, sealed: res.headers.has('x-quarry-sealed-until') }
}

const names = Object.keys(WINDOWS)
const cells = names.flatMap((name) => (['sealed', 'events'] as const).map((app) => ({ name, app, ms: [] as number[], db: [] as number[], loads: [] as number[] })))
// The first round checks every pair of answers and warms both paths.
for (const name of names) {
  const [fromSealed, fromEvents] = [await ask('sealed', WINDOWS[name]!), await ask('events', WINDOWS[name]!)]
  if (!fromSealed.sealed) throw new Error(`${name}: the sealed history did not answer`)
  if (!isDeepStrictEqual(fromSealed.body, fromEvents.body)) throw new Error(`${name}: the sealed answer differs from the events' (${fromSealed.body.length} vs ${fromEvents.body.length} rows)`)
  console.log(`${name}: ${fromEvents.body.length} pages, identical`)
}
for (let i = 0; i < runs; i++) {
  for (let k = 0; k < cells.length; k++) {
    const cell = cells[(i + k) % cells.length]!
    const r = await ask(cell.app, WINDOWS[cell.name]!)
    cell.ms.push(r.ms)
    cell.db.push(r.db)
    cell.loads.push(loadavg()[0]!)
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const rows = names.map((name) => {
  const [s, e] = [cells.find((c) => c.name === name && c.app === 'sealed')!, cells.find((c) => c.name === name && c.app === 'events')!]
  return { window: name, sealed_ms: round(median(s.ms), 1), sealed_db_ms: round(median(s.db), 1), events_ms: round(median(e.ms), 1), events_db_ms: round(median(e.db), 1), ratio: round(median(e.ms) / median(s.ms), 1), load: round(median([...s.loads, ...e.loads]), 2) }
})
console.table(rows)
const report = { date: new Date().toISOString(), machine: { cores: cpus().length }, project, clock: clock.toISO(), runs, rows }
if (values.out) writeFileSync(new URL(`./results/${values.out}.json`, import.meta.url), `${JSON.stringify(report, null, 2)}\n`)
await sealed.stop()
await rt.close()
