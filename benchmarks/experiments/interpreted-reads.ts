/**
 * Reads compiled against interpreted (`INTERPRETED` in src/clickhouse/run.ts): each route's sealed
 * statement, as the app plans it (explain=sql), run alternately with ClickHouse's JIT on and off
 * in one process; medians of wall time and of the process's CPU, and whether both gave the same rows (as sets).
 *
 *   npx tsx benchmarks/experiments/interpreted-reads.ts DATA_DIR PROJECT [RUNS]
 */
import { createHash } from 'node:crypto'
import { loadavg } from 'node:os'
import type { Statement } from '../../src/clickhouse/run.ts'
import { sealedProjectApp } from '../lib/sealed-project.ts'

const [dir, project, runsArg = '15'] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: interpreted-reads.ts DATA_DIR PROJECT [RUNS]')
const runs = Number(runsArg)
const { rt, app, headers } = await sealedProjectApp(dir, project, 'interpreted-reads')

/** The route's last statement as the app runs it now (its snapshots written by the first request). */
async function planned(route: string): Promise<Statement> {
  const url = `http://q/insights/${project}/${route}?range=30d`
  await (await app.request(url, { headers })).text()
  const body = (await (await app.request(`${url}&explain=sql`, { headers })).json()) as { sql: string[]; params: Record<string, unknown> }
  return { name: route, sql: body.sql.at(-1)!.replace(/\nSETTINGS[\s\S]*$/, ''), params: body.params }
}

const COMPILED = { compile_expressions: 1, compile_aggregate_expressions: 1, compile_sort_description: 1 }
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
console.log(`${project}, 30d, medians of ${runs} alternating runs, load ${loadavg()[0]!.toFixed(1)}\n`)
console.log('| route | compiled ms (CPU) | interpreted ms (CPU) | same rows |\n|---|--:|--:|---|')
for (const route of ['metrics', 'pages', 'referrer', 'city', 'entry_page']) {
  const stmt = await planned(route)
  const ways = { compiled: { ...stmt, settings: COMPILED }, interpreted: stmt }
  const times = { compiled: [] as number[], interpreted: [] as number[] }
  const cpu = { compiled: [] as number[], interpreted: [] as number[] }
  const hashes = new Set<string>()
  for (let i = 0; i <= runs; i++) {
    for (const way of (i % 2 ? ['interpreted', 'compiled'] : ['compiled', 'interpreted']) as (keyof typeof ways)[]) {
      const c0 = process.cpuUsage()
      const t0 = performance.now()
      const rows = await rt.runner.rows(ways[way], { timeoutS: 120 })
      const ms = performance.now() - t0
      const c = process.cpuUsage(c0)
      // As a set: /metrics' grouping sets come in no set order.
      hashes.add(createHash('md5').update(JSON.stringify(rows.map((r) => JSON.stringify(r)).sort())).digest('hex'))
      // The first round compiles (or not) and warms the caches: not counted.
      if (i > 0) {
        times[way].push(ms)
        cpu[way].push((c.user + c.system) / 1000)
      }
    }
  }
  const f = (way: keyof typeof ways) => `${median(times[way]).toFixed(0)} (${median(cpu[way]).toFixed(0)})`
  console.log(`| ${route} | ${f('compiled')} | ${f('interpreted')} | ${hashes.size === 1} |`)
}
await rt.close()
