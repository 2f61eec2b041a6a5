/**
 * What other layouts of `sessions` would buy: the levers "projections" and "codecs", and the bound
 * of a time-sorted table. (LowCardinality cannot be had here: the engine refuses a
 * SimpleAggregateFunction(min, Tuple(at, value LowCardinality(String))) column, because min over
 * that tuple returns Tuple(at, value String).)
 *
 * Measured on a bench data directory without changing Quarry's schema: each candidate is a copy of
 * `quarry.sessions` (the same rows, merged to one part like Quarry's) in the scratch database
 * `bench_exp`, asked Quarry's own breakdown and /metrics statements. Each candidate must return
 * the same rows as Quarry before it is timed; runs are interleaved.
 *
 *   npx tsx benchmarks/experiments/sessions-layout.ts --dir D [--project p001] [--days 30] [--runs 15] [--dimension country] [--rebuild]
 *
 *   by_start  + a projection ordered by (project_id, created_at), read without FINAL. Exact only
 *             while the table is one part: a table that takes inserts always has fresh parts.
 *   zstd      every stored column compressed with ZSTD(1) instead of LZ4.
 *   flat      one row per session, a MergeTree ordered by (project_id, created_at), no FINAL: the
 *             bound of any time-sorted layout. No view can keep it exact; it is a snapshot.
 */
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { configSchema } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import { findDimension } from '../../src/query/dimensions.ts'
import { breakdownStatement } from '../../src/query/insights.ts'
import { metricsStatement } from '../../src/query/metrics.ts'
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
const rows = async <T>(sql: string, params: Record<string, unknown> = {}): Promise<T[]> =>
  (await exec(`${sql} FORMAT JSONEachRow`, params)).text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as T)

const COPIES = ['by_start', 'zstd'] as const

async function build(): Promise<void> {
  await command('CREATE DATABASE IF NOT EXISTS bench_exp')
  const have = await rows<{ name: string }>("SELECT name FROM system.tables WHERE database = 'bench_exp'")
  if ([...COPIES, 'flat'].every((t) => have.some((h) => h.name === t)) && !values.rebuild) return
  const stored = await rows<{ name: string; type: string }>(
    "SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = 'sessions' AND default_kind != 'ALIAS' ORDER BY position",
  )
  for (const copy of COPIES) {
    await command(`DROP TABLE IF EXISTS bench_exp.${copy}`)
    await command(`CREATE TABLE bench_exp.${copy} AS sessions`)
  }
  await command("ALTER TABLE bench_exp.by_start MODIFY SETTING deduplicate_merge_projection_mode = 'rebuild'")
  await command('ALTER TABLE bench_exp.by_start ADD PROJECTION by_start (SELECT * ORDER BY project_id, created_at)')
  for (const c of stored) await command(`ALTER TABLE bench_exp.zstd MODIFY COLUMN ${c.name} ${c.type} CODEC(ZSTD(1))`)
  for (const copy of COPIES) {
    await command(`INSERT INTO bench_exp.${copy} SELECT * FROM sessions SETTINGS max_insert_threads = 2`)
    await command(`OPTIMIZE TABLE bench_exp.${copy} FINAL`)
  }
  await command('DROP TABLE IF EXISTS bench_exp.flat')
  await command(`CREATE TABLE bench_exp.flat ENGINE = MergeTree ORDER BY (project_id, created_at) AS
    SELECT project_id, id, CAST(created_at AS DateTime64(3, 'UTC')) AS created_at, CAST(ended_at AS DateTime64(3, 'UTC')) AS ended_at,
      duration, is_bounce, profile_key, toUInt64(screen_view_count) AS screen_view_count, toUInt64(revenue) AS revenue,
      ${stored.filter((c) => c.name.startsWith('first_') && c.name !== 'first_profile_id').map((c) => `${c.name.slice('first_'.length)}`).join(', ')},
      entry_origin, entry_path, exit_origin, exit_path
    FROM sessions FINAL`)
}

const started = performance.now()
await build()
const buildS = round((performance.now() - started) / 1000, 1)

const project = values.project!
const dimension = findDimension(values.dimension!)
if (!dimension) throw new Error(`unknown dimension ${values.dimension}`)
const [last] = await rows<{ t: number }>('SELECT toUnixTimestamp64Milli(max(created_at)) AS t FROM events WHERE project_id = {p:String}', { p: project })
const end = new Date(Number(last!.t))
const day = (offset: number) => new Date(end.getTime() - offset * 86_400_000).toISOString().slice(0, 10)
const range = resolveRange({ startDate: day(Number(values.days)), endDate: day(0) }, 'UTC', end, '30d')
const breakdown = breakdownStatement(dimension, { projectId: project, range, filters: [], limit: 11, offset: 0 })
const metrics = metricsStatement({ projectId: project, range, interval: 'day', filters: [] })
const final = (sql: string) => `${sql}\nSETTINGS output_format_json_quote_64bit_integers = 0\nFORMAT JSONEachRow`
const on = (sql: string, table: string) => final(sql.replaceAll('FROM sessions FINAL', `FROM ${table}`))

interface Case {
  name: string
  sql: string
  params: Record<string, unknown>
  reference: string
}
const cases: Case[] = []
for (const [label, stmt] of [[dimension.name, breakdown], ['/metrics', metrics]] as const) {
  const reference = `${label}: Quarry (sessions FINAL)`
  cases.push({ name: reference, sql: final(stmt.sql), params: stmt.params, reference })
  cases.push({ name: `${label}: by_start (projection, no FINAL)`, sql: on(stmt.sql, 'bench_exp.by_start'), params: stmt.params, reference })
  cases.push({ name: `${label}: zstd (FINAL)`, sql: on(stmt.sql, 'bench_exp.zstd FINAL'), params: stmt.params, reference })
  // flat has plain columns under the names Quarry's aliases give them, so the same SQL reads it.
  cases.push({ name: `${label}: flat, time-sorted snapshot (bound)`, sql: on(stmt.sql, 'bench_exp.flat'), params: stmt.params, reference })
}

// /metrics has no ORDER BY (its caller orders the buckets), so answers compare as sets of rows.
const answers = new Map<string, string>()
for (const c of cases) answers.set(c.name, (await exec(c.sql, c.params)).text.split('\n').sort().join('\n'))
for (const c of cases) {
  if (answers.get(c.name) !== answers.get(c.reference)) {
    throw new Error(`${c.name} answers differently from ${c.reference}:\n${answers.get(c.name)!.slice(0, 400)}\nvs\n${answers.get(c.reference)!.slice(0, 400)}`)
  }
}

const times = new Map<string, number[]>(cases.map((c) => [c.name, []]))
for (let i = 0; i < runs + 1; i++) {
  for (let k = 0; k < cases.length; k++) {
    const c = cases[(i + k) % cases.length]!
    const { ms } = await exec(c.sql, c.params)
    if (i > 0) times.get(c.name)!.push(ms)
  }
}

const sizes = await rows<{ table: string; mb: number }>(
  `SELECT concat(database, '.', name) AS table, round(total_bytes / 1048576, 1) AS mb FROM system.tables
   WHERE (database = '${rt.engine.database}' AND name = 'sessions') OR (database = 'bench_exp' AND name IN (${[...COPIES, 'flat'].map((t) => `'${t}'`).join(', ')}))
   ORDER BY table`,
)
const [counts] = await rows<{ in_window: number; all: number }>(
  `SELECT countIf(created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}) AS in_window, count() AS all
   FROM bench_exp.flat WHERE project_id = {project:String}`,
  breakdown.params,
)
console.log(JSON.stringify({
  project, window: `${breakdown.params.from} … ${breakdown.params.to}`, sessions_in_window: counts!.in_window, sessions_of_project: counts!.all,
  sizes, candidates_built_s: buildS, load: loadavg().map((l) => round(l, 2)),
}, null, 2))
for (const [name, t] of times) console.log(`${name.padEnd(44)} p50 ${round(quantile(t, 0.5), 1).toString().padStart(7)} ms   p90 ${round(quantile(t, 0.9), 1)} ms`)
await rt.close()
