/**
 * Where the time of funnel and user_flow per session goes on a seeded project with a sealed build
 * (sql/schema/021_product_sessions.sql): the sealed statements beside the ones over the events and
 * beside their parts (reading the window's session arrays, the step numbers, the windowFunnel
 * aggregate, the flow's names and paths), every statement once per round, medians; then what the
 * build step costs for the whole history, written under a scratch version and dropped.
 *   QUARRY_DATA_DIR=… npx tsx benchmarks/product-units-profile.ts --project pl [--runs 5]
 */
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import type { Statement } from '../src/clickhouse/run.ts'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/log.ts'
import { funnelStatement } from '../src/query/product/funnel.ts'
import { sealedFlow, sealedFunnel } from '../src/query/product/sealed-units.ts'
import { flowStatement } from '../src/query/product/user-flow.ts'
import { productRange } from '../src/query/product/window.ts'
import { readSealedLatest, sealedLatestStatement, type SealedLatestRow } from '../src/query/sealed.ts'
import { renderSql } from '../src/query/sql-templates.ts'
import { clickhouseInstant } from '../src/query/time-range.ts'
import { openRuntime } from '../src/runtime.ts'
import { round } from './lib/stats.ts'
import { dataClock } from './lib/data-clock.ts'

const { values } = parseArgs({ options: { project: { type: 'string', default: 'pl' }, runs: { type: 'string', default: '5' } } })
const project = values.project!
const rt = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' as const, QUARRY_SEALED: false }, createLogger('warn'))
const now = (await dataClock(rt.runner, project)).clock.toJSDate()
const [row] = await rt.runner.rows<SealedLatestRow>(sealedLatestStatement([project]), { timeoutS: 60 })
const build = readSealedLatest(row)?.build
if (!build) throw new Error(`no sealed build of ${project} in this format: run benchmarks/product-latency.ts first`)
const range = productRange({ range: '30d' }, 'UTC', now, '30d')
const unit = { projectId: project, range, filters: [], groupBy: 'session_id' as const }
const steps = ['screen_view', 'add_to_cart', 'checkout']
const flow = { ...unit, startEvent: 'screen_view', mode: 'after' as const, steps: 5, include: [], exclude: [] }
const params = {
  project,
  version: build.version,
  from: clickhouseInstant(range.start),
  to: clickhouseInstant(range.end),
  from_ms: range.start.toMillis(),
  to_ms: range.end.toMillis(),
  steps,
}
const sessions =
  "FROM sealed_session_events WHERE project_id = {project:String} AND version = {version:UInt64} AND created_at < {to:DateTime64(3, 'UTC')} AND ended_at >= {from:DateTime64(3, 'UTC')}"
const inside = "created_at >= {from:DateTime64(3, 'UTC')} AND ended_at < {to:DateTime64(3, 'UTC')}"
const ks = `if(${inside}, arrayMap(n -> transform(n, {steps:Array(String)}, [1, 2, 3], 0), names), arrayMap((n, t) -> if(t >= {from_ms:UInt64} AND t < {to_ms:UInt64}, transform(n, {steps:Array(String)}, [1, 2, 3], 0), 0), names, times))`
const flowNames = `arrayCompact(if(${inside}, names, arrayFilter((name, t) -> t >= {from_ms:UInt64} AND t < {to_ms:UInt64}, names, times)))`
const part = (name: string, sql: string): Statement => ({ name, sql, params })
const parts: Statement[] = [
  { ...funnelStatement({ ...unit, steps, windowHours: 24 }), name: 'funnel 3 steps, 30d, over the events' },
  { ...sealedFunnel({ ...unit, steps, windowHours: 24 })!(build), name: 'funnel 3 steps, 30d, sealed' },
  part('… read the window\'s session arrays', `SELECT count(), sum(length(times)), sum(length(names)) ${sessions}`),
  part('… their step numbers, and level 1 from them', `SELECT sum(has(${ks} AS ks, 1)) ${sessions}`),
  part(
    '… windowFunnel over the arrays of the sessions with a second step',
    `SELECT sum(arrayReduce('windowFunnel(1382400000, \\'strict_increase\\')', arrayMap((t, k) -> toUInt64(t * 16 + 15 - k), times, ${ks} AS ks), arrayMap(k -> k = 1, ks), arrayMap(k -> k = 2, ks), arrayMap(k -> k = 3, ks))) ${sessions} AND has(names, 'add_to_cart')`,
  ),
  { ...flowStatement(flow), name: 'user flow 5 steps, 30d, over the events' },
  { ...sealedFlow(flow)!(build), name: 'user flow 5 steps, 30d, sealed' },
  part('… the sessions\' names in the window, compacted', `SELECT count(), sum(length(${flowNames})) ${sessions}`),
  part(
    '… and the paths cut from them, counted',
    `SELECT count() FROM (SELECT path, count() FROM (SELECT arraySlice(arraySlice(${flowNames} AS flow_names, indexOf(flow_names, 'screen_view'), 5) AS p, 1, if((arrayFirstIndex((x, i) -> indexOf(p, x) < i, p, arrayEnumerate(p)) AS r) = 0, toInt64(length(p)), toInt64(r) - 1)) AS path ${sessions}) WHERE length(path) >= 2 GROUP BY path)`,
  ),
]

const runs = Number(values.runs)
console.log(`load ${loadavg().map((l) => round(l, 2)).join(' ')}`)
const times = parts.map(() => [] as number[])
for (let i = 0; i < runs; i++) {
  for (const [k, statement] of parts.entries()) {
    const started = performance.now()
    await rt.runner.rows(statement, { timeoutS: 60 })
    times[k]!.push(performance.now() - started)
  }
}
for (const [k, statement] of parts.entries()) {
  const sorted = times[k]!.sort((a, b) => a - b)
  console.log(`${statement.name}: median ${round(sorted[Math.floor(sorted.length / 2)]!, 0)} ms (${sorted.map((t) => round(t, 0)).join(', ')})`)
}
console.log(`load ${loadavg().map((l) => round(l, 2)).join(' ')}`)
// What migration 021 adds to a build, for the whole history, under a scratch version.
const scratch = { project, version: 1, closed: clickhouseInstant(build.closedAt) }
const started = performance.now()
await rt.runner.command({ name: 'sealed_build_session_events', sql: renderSql('sealed_build_session_events'), params: scratch })
console.log(`sealed_build_session_events (whole history): ${round(performance.now() - started, 0)} ms, load ${round(loadavg()[0]!, 2)}`)
const [size] = await rt.runner.rows<{ rows: number; bytes: number }>(
  { name: 'size', sql: "SELECT sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts WHERE active AND table = 'sealed_session_events' AND partition = {part:String}", params: { part: `('${project}',1)` } },
  { timeoutS: 60 },
)
console.log(`  ${size!.rows} rows, ${round(size!.bytes / 2 ** 20, 1)} MB`)
await rt.runner.command({ name: 'versioned_drop', sql: renderSql('versioned_drop', { table: 'sealed_session_events' }), params: { project, version: 1 } })
await rt.close()
