/**
 * Latency of OpenPanel's event explorer and people routes (issue 20: events, events/names,
 * events/properties, events/property_values, profiles, profiles/{id}[/sessions|/metrics],
 * sessions) and of profile filters on the export, over real HTTP against a seeded data directory,
 * cache off, every cell's requests interleaved with the others' in a rotating order so that a
 * loaded machine weighs on all of them alike. The clock is pinned half an hour after the
 * project's last event. Per cell: p50/p90/p99 over HTTP and the server's `db` time, with the load
 * average.
 *   QUARRY_DATA_DIR=… npx tsx benchmarks/people-latency.ts --project pp [--runs 20] [--out people-latency]
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
import { agent } from './lib/http.mjs'
import { round } from './lib/stats.ts'
import { dataClock } from './lib/data-clock.ts'

const { values } = parseArgs({
  options: { project: { type: 'string', default: 'pp' }, runs: { type: 'string', default: '20' }, out: { type: 'string', default: 'people-latency' } },
})
const project = values.project!
const runs = Number(values.runs)
const load = () => loadavg().map((l) => round(l, 2))
const loadAtStart = load()
const config = { ...loadConfig(), LOG_LEVEL: 'warn' as const, QUARRY_RATE_LIMIT: 1_000_000, QUARRY_SEALED: false }
const rt = await openRuntime(config, createLogger('warn'))
const one = async <T>(sql: string) => (await rt.runner.rows<T>({ name: 'bench', sql, params: { p: project } }, { timeoutS: 600 }))[0]!
const { clock, events } = await dataClock(rt.runner, project)
// The most active identified visitor, and an anonymous one: the people a dashboard opens.
const person = await one<{ id: string }>(
  'SELECT profile_id AS id FROM events WHERE project_id = {p:String} AND profile_id != device_id GROUP BY id ORDER BY count() DESC, id LIMIT 1',
)
const visitor = await one<{ id: string }>(
  'SELECT profile_id AS id FROM events WHERE project_id = {p:String} AND profile_id = device_id GROUP BY id ORDER BY count() DESC, id LIMIT 1',
)
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

const samples = await sampleCells(
  cells.map((c) => ({ name: c.name, url: `http://127.0.0.1:${server.port}/${c.path}` })),
  { runs, warmup: 2, headers, agent: keepAlive, round: (done) => done % 5 === 0 && console.log(`round ${done} of ${runs + 2}, load ${load().join(' ')}`) },
)

const results = cells.map((cell, i) => ({ cell: cell.name, path: cell.path, ...cellFigures(samples[i]!) }))
for (const r of results) console.log(JSON.stringify(r))
saveReport(values.out!, {
  engine: rt.engine.mode,
  project,
  events,
  clock: clock.toISO(),
  runs,
  load_average: { start: loadAtStart, end: load() },
  results,
})
await server.shutdown(1000)
await rt.close()
