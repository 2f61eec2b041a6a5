/**
 * Does the embedded engine run queries in parallel? chDB's Node binding sends every query with
 * parameters through one process-wide chain (node_modules/chdb/index.js, runExclusiveParam), so
 * parameterized queries run one at a time whatever the query gate allows; queries without
 * parameters are not chained. This runs the same statement k at a time, with parameters and with
 * the same values written as literals (benchmark only: Quarry never splices values into SQL).
 *
 *   npx tsx benchmarks/experiments/chdb-parallel.ts --dir D [--project p051] [--k 1,2,4,8] [--n 32]
 */
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { configSchema } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import { findDimension } from '../../src/query/dimensions.ts'
import { breakdownStatement } from '../../src/query/insights.ts'
import { resolveRange } from '../../src/query/time-range.ts'
import { openRuntime } from '../../src/runtime.ts'
import { quantile, round } from '../lib/stats.ts'

const { values } = parseArgs({
  options: { dir: { type: 'string' }, project: { type: 'string', default: 'p051' }, k: { type: 'string', default: '1,2,4,8' }, n: { type: 'string', default: '32' } },
})
const rt = await openRuntime(configSchema.parse({ QUARRY_DATA_DIR: values.dir, QUARRY_DEMO: '0', LOG_LEVEL: 'warn' }), createLogger('warn'))
const range = resolveRange({ range: '30d' }, 'UTC', new Date('2026-11-21T09:00:00Z'), '30d')
const stmt = breakdownStatement(findDimension('country')!, { projectId: values.project!, range, filters: [], limit: 11, offset: 0 })
const sql = `${stmt.sql}\nFORMAT JSONEachRow`
// Literal form for the experiment: the values are our own constants (a project id, dates, integers).
const literal = sql.replace(/\{(\w+):([^}]+)\}/g, (_, name: string, type: string) => {
  const v = stmt.params[name]
  return /Int/.test(type) ? String(v) : `CAST('${String(v).replace(/'/g, "\\'")}' AS ${type})`
})

async function once(parameterized: boolean): Promise<number> {
  const started = performance.now()
  const r = parameterized ? await rt.engine.client.exec({ query: sql, query_params: stmt.params }) : await rt.engine.client.exec({ query: literal })
  for await (const _ of r.stream) {
    // drained
  }
  return performance.now() - started
}

if ((await (async () => {
  const a = await rt.engine.client.exec({ query: sql, query_params: stmt.params })
  const b = await rt.engine.client.exec({ query: literal })
  let x = ''
  let y = ''
  for await (const c of a.stream) x += c
  for await (const c of b.stream) y += c
  return x === y
})()) === false) throw new Error('the literal statement answers differently')

const n = Number(values.n)
console.log(`country breakdown of ${values.project}, 30d; ${n} queries per run; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
for (const k of values.k!.split(',').map(Number)) {
  for (const parameterized of [true, false]) {
    const latencies: number[] = []
    let next = 0
    const started = performance.now()
    await Promise.all(Array.from({ length: k }, async () => {
      while (next++ < n) latencies.push(await once(parameterized))
    }))
    const seconds = (performance.now() - started) / 1000
    console.log(`k=${k} ${parameterized ? 'parameters' : 'literals  '}  ${round(n / seconds, 1)} queries/s, latency p50 ${round(quantile(latencies, 0.5), 1)} ms`)
  }
}
await rt.close()
