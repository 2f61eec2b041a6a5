/**
 * Latency of OpenPanel's event explorer and people routes (issue 20: events, events/names,
 * events/properties, events/property_values, profiles, profiles/{id}[/sessions|/metrics],
 * sessions) and of profile filters on the export, over real HTTP against a seeded data directory,
 * cache off, every cell's requests interleaved with the others' in a rotating order so that a
 * loaded machine weighs on all of them alike. The clock is pinned half an hour after the
 * project's last event. Per cell: p50/p90/p99 over HTTP, the server's `db` time and what the
 * statements read (X-Quarry-Stats), with the load average.
 *   QUARRY_DATA_DIR=… npx tsx benchmarks/people-latency.ts --project pp [--runs 20] [--out people-latency]
 */
import { writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import { parseArgs } from 'node:util'
import { DateTime } from 'luxon'
import { buildApp } from '../src/app.ts'
import { createClientRow } from '../src/auth/clients.ts'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/log.ts'
import { openRuntime } from '../src/runtime.ts'
import { listen } from '../src/server.ts'
import { agent, get } from './lib/http.mjs'
import { round, summarize } from './lib/stats.ts'

const { values } = parseArgs({
  options: { project: { type: 'string', default: 'pp' }, runs: { type: 'string', default: '20' }, out: { type: 'string', default: 'people-latency' } },
})
const project = values.project!
const runs = Number(values.runs)
const load = () => loadavg().map((l) => round(l, 2))
const loadAtStart = load()
const config = { ...loadConfig(), LOG_LEVEL: 'warn' as const, QUARRY_RATE_LIMIT: 1_000_000, QUARRY_SEALED: false, QUARRY_PAGE_ROLLUPS: false }
const rt = await openRuntime(config, createLogger('warn'))
const one = async <T>(sql: string) => (await rt.runner.rows<T>({ name: 'bench', sql, params: { p: project } }, { timeoutS: 600 }))[0]!
const last = await one<{ last: string; events: number }>('SELECT max(created_at) AS last, count() AS events FROM events WHERE project_id = {p:String}')
// The most active identified visitor, and an anonymous one: the people a dashboard opens.
const person = await one<{ id: string }>(
  'SELECT profile_id AS id FROM events WHERE project_id = {p:String} AND profile_id != device_id GROUP BY id ORDER BY count() DESC, id LIMIT 1',
)
const visitor = await one<{ id: string }>(
  'SELECT profile_id AS id FROM events WHERE project_id = {p:String} AND profile_id = device_id GROUP BY id ORDER BY count() DESC, id LIMIT 1',
)
const clock = DateTime.fromSQL(last.last, { zone: 'UTC' }).plus({ minutes: 30 })
const now = () => clock.toJSDate()

const client = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'default', name: 'bench-people' })
const headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
const app = buildApp({ config, runner: rt.runner, logger: rt.logger, signingKey: rt.signingKey, now, metrics: false })
const server = await listen(app, '127.0.0.1', 0)
const keepAlive = agent(1)

const json = (v: unknown) => encodeURIComponent(JSON.stringify(v))
const PLAN_PRO = json([{ name: 'profile.properties.plan', operator: 'is', value: ['pro'] }])
const IDENTIFIED = json([{ name: 'has_profile', operator: 'is', value: ['true'] }])
const cells: { name: string; path: string }[] = [
  { name: 'events, 30d, 20 rows', path: `insights/${project}/events` },
  { name: 'events, 30d, screen_view + country + 100 rows', path: `insights/${project}/events?eventNames=screen_view&country=SE&limit=100` },
  { name: 'events, 30d, profile.properties.plan', path: `insights/${project}/events?filters=${PLAN_PRO}` },
  { name: 'events/names (all time)', path: `insights/${project}/events/names` },
  { name: 'events/properties (all time)', path: `insights/${project}/events/properties` },
  { name: 'events/property_values screen_view __path', path: `insights/${project}/events/property_values?eventName=screen_view&propertyKey=__path` },
  { name: 'profiles, 20 newest', path: `insights/${project}/profiles` },
  { name: 'profiles, name search + minSessions=2', path: `insights/${project}/profiles?name=a&minSessions=2` },
  { name: 'profiles/{identified}', path: `insights/${project}/profiles/${encodeURIComponent(person.id)}` },
  { name: 'profiles/{anonymous} (no row)', path: `insights/${project}/profiles/${encodeURIComponent(visitor.id)}` },
  { name: 'profiles/{identified}/sessions', path: `insights/${project}/profiles/${encodeURIComponent(person.id)}/sessions` },
  { name: 'profiles/{identified}/metrics', path: `insights/${project}/profiles/${encodeURIComponent(person.id)}/metrics` },
  { name: 'sessions, 30d, 20 rows', path: `insights/${project}/sessions` },
  { name: 'sessions, 30d, session.is_bounce=false', path: `insights/${project}/sessions?filters=${json([{ name: 'session.is_bounce', operator: 'is', value: [false] }])}` },
  { name: 'export/events page, has_profile=true', path: `export/events?projectId=${project}&filters=${IDENTIFIED}&includes=profile,meta` },
  { name: 'export/events page, profile.properties.plan', path: `export/events?projectId=${project}&filters=${PLAN_PRO}` },
]

const samples = cells.map(() => ({ ms: [] as number[], db: [] as number[], rows: 0, bytes: 0, loads: [] as number[] }))
for (let i = 0; i < runs + 2; i++) {
  for (let k = 0; k < cells.length; k++) {
    const index = (i + k) % cells.length
    const cell = cells[index]!
    const res = await get(`http://127.0.0.1:${server.port}/${cell.path}`, headers, keepAlive)
    if (res.status !== 200) throw new Error(`${cell.name}: ${res.status} ${res.body.toString().slice(0, 300)}`)
    if (i < 2) continue
    const s = samples[index]!
    s.ms.push(res.ms)
    s.db.push(Number(/db;dur=([\d.]+)/.exec(String(res.headers['server-timing'] ?? ''))?.[1] ?? NaN))
    const stats = String(res.headers['x-quarry-stats'] ?? '')
    s.rows = Number(/rows_read=(\d+)/.exec(stats)?.[1] ?? 0)
    s.bytes = Number(/bytes_read=(\d+)/.exec(stats)?.[1] ?? 0)
    s.loads.push(loadavg()[0]!)
  }
  if (i % 5 === 4) console.log(`round ${i + 1} of ${runs + 2}, load ${load().join(' ')}`)
}

const results = cells.map((cell, i) => {
  const s = samples[i]!
  const http = summarize(s.ms)
  return {
    cell: cell.name,
    path: cell.path,
    http_p50_ms: http.p50,
    http_p90_ms: http.p90,
    http_p99_ms: http.p99,
    db_p50_ms: summarize(s.db).p50,
    rows_read: s.rows,
    mb_read: round(s.bytes / 2 ** 20, 1),
    load1_mean: round(s.loads.reduce((a, b) => a + b, 0) / s.loads.length, 2),
  }
})
for (const r of results) console.log(JSON.stringify(r))
const report = {
  date: new Date().toISOString(),
  machine: { cores: cpus().length, model: cpus()[0]?.model, memory_gb: Math.round(totalmem() / 2 ** 30) },
  engine: rt.engine.mode,
  project,
  events: last.events,
  clock: clock.toISO(),
  runs,
  load_average: { start: loadAtStart, end: load() },
  results,
}
writeFileSync(new URL(`./results/${values.out}.json`, import.meta.url), `${JSON.stringify(report, null, 2)}\n`)
await server.shutdown(1000)
await rt.close()
