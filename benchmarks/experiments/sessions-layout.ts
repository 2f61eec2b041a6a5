/**
 * Where the time of the sessions-based endpoints goes, and what another layout of `sessions`
 * would buy — measured on a bench data directory, without changing Quarry's schema.
 *
 *   npx tsx benchmarks/experiments/sessions-layout.ts --dir /path/to/10m [--project p001] [--days 30] [--runs 15]
 *
 * Candidates are built in a scratch database `bench_exp` of that directory from the same events:
 *   attr_min  AggregatingMergeTree ORDER BY (project_id, id) like `sessions`, but each first-event
 *             attribute is its own SimpleAggregateFunction(min, Tuple(at, value)) column instead of
 *             one 21-field tuple — exact and additive like today, a breakdown reads one narrow column.
 *   flat      one row per session (a finished snapshot of sessions FINAL), MergeTree
 *             ORDER BY (project_id, created_at): the upper bound of what a time-sorted, merge-free
 *             layout gives — it cannot be maintained exactly by a materialized view, so it is a bound,
 *             not a proposal.
 * Every candidate query is checked to return the same rows as Quarry's before it is timed.
 */
import { parseArgs } from 'node:util'
import { loadavg } from 'node:os'
import { configSchema } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import { findDimension } from '../../src/query/dimensions.ts'
import { breakdownStatement, metricsStatement } from '../../src/query/insights.ts'
import { resolveRange } from '../../src/query/time-range.ts'
import { openRuntime } from '../../src/runtime.ts'
import { quantile, round } from '../lib/stats.ts'

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    project: { type: 'string', default: 'p001' },
    days: { type: 'string', default: '30' },
    runs: { type: 'string', default: '15' },
    dimension: { type: 'string', default: 'country' },
    rebuild: { type: 'boolean', default: false },
  },
})
if (!values.dir) throw new Error('--dir is required')
const runs = Number(values.runs)
const rt = await openRuntime(configSchema.parse({ QUARRY_DATA_DIR: values.dir, QUARRY_DEMO: '0', LOG_LEVEL: 'warn' }), createLogger('warn'))
const client = rt.engine.client

async function exec(sql: string, params: Record<string, unknown> = {}): Promise<{ ms: number; text: string }> {
  const started = performance.now()
  const r = await client.exec({ query: sql, query_params: params })
  let text = ''
  for await (const chunk of r.stream) text += chunk
  return { ms: performance.now() - started, text }
}
const command = (sql: string) => client.command({ query: sql })
const rows = async (sql: string) => (await exec(`${sql} FORMAT JSONEachRow`)).text.split('\n').filter(Boolean).map((l) => JSON.parse(l))

const ATTRS = ['profile_id', 'device_id', 'referrer', 'referrer_name', 'referrer_type', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content',
  'country', 'region', 'city', 'device', 'brand', 'model', 'browser', 'browser_version', 'os', 'os_version']

async function build() {
  await command('CREATE DATABASE IF NOT EXISTS bench_exp')
  const [{ n: have }] = await rows("SELECT count() AS n FROM system.tables WHERE database = 'bench_exp' AND name IN ('attr_min', 'flat')")
  if (have === 2 && !values.rebuild) return
  await command('DROP TABLE IF EXISTS bench_exp.attr_min')
  await command('DROP TABLE IF EXISTS bench_exp.flat')
  await command(`CREATE TABLE bench_exp.attr_min (
    project_id String, id String,
    created_at SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    ended_at SimpleAggregateFunction(max, DateTime64(3, 'UTC')),
    ${ATTRS.map((a) => `${a}_first SimpleAggregateFunction(min, Tuple(DateTime64(3, 'UTC'), String))`).join(',\n    ')},
    entry SimpleAggregateFunction(min, Tuple(at DateTime64(3, 'UTC'), origin String, path String)),
    exit SimpleAggregateFunction(max, Tuple(at DateTime64(3, 'UTC'), origin String, path String)),
    screen_view_count SimpleAggregateFunction(sum, UInt64),
    event_count SimpleAggregateFunction(sum, UInt64),
    revenue SimpleAggregateFunction(sum, UInt64)
  ) ENGINE = AggregatingMergeTree ORDER BY (project_id, id)`)
  // Filled from sessions' own rows, so it holds exactly the same partial states (no new aggregation).
  await command(`INSERT INTO bench_exp.attr_min SELECT project_id, id, created_at, ended_at,
    ${ATTRS.map((a) => `(first.at, tupleElement(first, '${a}'))`).join(', ')},
    entry, exit, screen_view_count, event_count, revenue FROM quarry.sessions SETTINGS max_insert_threads = 2`)
  await command(`CREATE TABLE bench_exp.flat ENGINE = MergeTree ORDER BY (project_id, created_at) AS
    SELECT project_id, id, CAST(created_at AS DateTime64(3, 'UTC')) AS created_at, CAST(ended_at AS DateTime64(3, 'UTC')) AS ended_at,
      duration, is_bounce, toUInt64(screen_view_count) AS screen_view_count, toUInt64(event_count) AS event_count, toUInt64(revenue) AS revenue,
      ${ATTRS.join(', ')}, entry_origin, entry_path, exit_origin, exit_path
    FROM quarry.sessions FINAL`)
  await command('OPTIMIZE TABLE bench_exp.attr_min FINAL')
}

const started = performance.now()
await build()
const buildS = round((performance.now() - started) / 1000, 1)

const project = values.project!
const dimension = findDimension(values.dimension!)!
const end = new Date((await rows(`SELECT toUnixTimestamp64Milli(max(created_at)) AS t FROM events WHERE project_id = '${project.replace(/'/g, '')}'`))[0].t)
const range = resolveRange({ startDate: new Date(end.getTime() - Number(values.days) * 86_400_000).toISOString().slice(0, 10), endDate: end.toISOString().slice(0, 10) }, 'UTC', end, '30d')
const stmt = breakdownStatement(dimension, { projectId: project, range, filters: [], limit: 11, offset: 0 })
const metrics = metricsStatement({ projectId: project, range, interval: 'day', filters: [] })
const base = (sql: string) => `${sql}\nSETTINGS output_format_json_quote_64bit_integers = 0\nFORMAT JSONEachRow`

const col = dimension.column
const attrValue = (table: string) => (table === 'attr_min' ? (a: string) => `tupleElement(${a}_first, 2)` : (a: string) => a)
function breakdownOn(table: 'attr_min' | 'flat'): string {
  const v = attrValue(table)
  const from = table === 'attr_min' ? 'bench_exp.attr_min FINAL' : 'bench_exp.flat'
  const duration = table === 'attr_min' ? "toUInt64(dateDiff('millisecond', created_at, ended_at))" : 'duration'
  const bounce = table === 'attr_min' ? 'screen_view_count <= 1' : 'is_bounce'
  return base(`SELECT ${dimension.prefix ? `nullIf(${v(dimension.prefix)}, '')` : 'NULL'} AS prefix, nullIf(${v(col)}, '') AS name,
      count() AS sessions, uniqExact(${v('profile_id')}) AS visitors, sum(screen_view_count) AS pageviews,
      round(100 * countIf(${bounce}) / sessions, 2) AS bounce_rate, round(sum(${duration}) / sessions / 1000, 2) AS avg_session_duration,
      sum(revenue) AS revenue
    FROM ${from}
    WHERE project_id = {project:String} AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
    GROUP BY prefix, name ORDER BY sessions DESC, prefix ASC NULLS LAST, name ASC NULLS LAST LIMIT {limit:UInt32} OFFSET {offset:UInt64}`)
}

const cases: { name: string; sql: string; params: Record<string, unknown>; same?: string }[] = [
  { name: `Quarry ${dimension.name} breakdown (sessions FINAL)`, sql: base(stmt.sql), params: stmt.params },
  { name: '  same, without FINAL (wrong when a session has several rows)', sql: base(stmt.sql.replace('FROM sessions FINAL', 'FROM sessions')), params: stmt.params },
  { name: '  only counting the window: count() FROM sessions FINAL', sql: base("SELECT count() FROM sessions FINAL WHERE project_id = {project:String} AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}"), params: stmt.params },
  { name: '  only counting the window, no FINAL', sql: base("SELECT count() FROM sessions WHERE project_id = {project:String} AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}"), params: stmt.params },
  { name: 'attr_min: narrow first-value columns (FINAL)', sql: breakdownOn('attr_min'), params: stmt.params, same: 'breakdown' },
  { name: 'flat: time-sorted snapshot, no FINAL (bound)', sql: breakdownOn('flat'), params: stmt.params, same: 'breakdown' },
  { name: 'Quarry /metrics (sessions FINAL + revenue events)', sql: base(metrics.sql), params: metrics.params },
  { name: '  same, without FINAL', sql: base(metrics.sql.replaceAll('FROM sessions FINAL', 'FROM sessions')), params: metrics.params },
]

const reference = (await exec(cases[0]!.sql, cases[0]!.params)).text
for (const c of cases.filter((c) => c.same)) {
  const got = (await exec(c.sql, c.params)).text
  if (got !== reference) throw new Error(`${c.name} answers differently:\n${got.slice(0, 500)}\nvs\n${reference.slice(0, 500)}`)
}

const times = new Map<string, number[]>(cases.map((c) => [c.name, []]))
for (let i = 0; i < runs + 1; i++) {
  for (let k = 0; k < cases.length; k++) {
    const c = cases[(i + k) % cases.length]!
    const { ms } = await exec(c.sql, c.params)
    if (i > 0) times.get(c.name)!.push(ms)
  }
}

const explainIndexes = (await exec(`EXPLAIN indexes = 1 ${stmt.sql}`, stmt.params)).text
const granules = [...explainIndexes.matchAll(/Granules: (\d+)\/(\d+)/g)].map((m) => `${m[1]}/${m[2]}`)
const [inWindow] = await rows(`SELECT count() AS n FROM bench_exp.flat WHERE project_id = '${project}' AND created_at >= '${stmt.params.from}' AND created_at < '${stmt.params.to}'`)
const [all] = await rows(`SELECT count() AS n FROM bench_exp.flat WHERE project_id = '${project}'`)

console.log(JSON.stringify({
  project, window: `${stmt.params.from} … ${stmt.params.to}`, sessions_in_window: inWindow.n, sessions_of_project: all.n,
  granules_read_by_quarry_breakdown: granules, candidates_built_s: buildS, load: loadavg().map((l) => round(l, 2)),
}, null, 2))
for (const [name, t] of times) console.log(`${name.padEnd(62)} p50 ${round(quantile(t, 0.5), 1).toString().padStart(7)} ms   p90 ${round(quantile(t, 0.9), 1)} ms`)
await rt.close()
