/**
 * What the first funnel-by-person request after an insert pays for its held people's snapshot
 * (sql/schema/046_sealed_live_held.sql): the write alone, under fresh stamps, median wall and CPU
 * time (the embedded engine runs in this process), with the rows each kind gets.
 *   QUARRY_DATA_DIR=… npx tsx benchmarks/experiments/held-snapshot-write.ts --project pl [--runs 7]
 */
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { loadConfig } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import { sealedLiveHeldWriteStatement } from '../../src/query/product/sealed-units.ts'
import { readSealedLatest, sealedLatestStatement, type SealedLatestRow } from '../../src/query/sealed.ts'
import { openRuntime } from '../../src/runtime.ts'

const { values } = parseArgs({ options: { project: { type: 'string', default: 'pl' }, runs: { type: 'string', default: '7' } } })
const project = values.project!
const rt = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' as const, QUARRY_SEALED: false }, createLogger('warn'))
const read = { timeoutS: 600 }
const [row] = await rt.runner.rows<SealedLatestRow>(sealedLatestStatement([project]), read)
const build = readSealedLatest(row)!.build
const wall: number[] = []
const cpu: number[] = []
let stamp = Date.now()
for (let i = 0; i < Number(values.runs) + 1; i++) {
  stamp += 1
  const c = process.cpuUsage()
  const t = performance.now()
  await rt.runner.command(sealedLiveHeldWriteStatement(project, build, stamp))
  const used = process.cpuUsage(c)
  if (i === 0) continue
  wall.push(performance.now() - t)
  cpu.push((used.user + used.system) / 1000)
}
const kinds = await rt.runner.rows({ name: 'held_kinds', sql: 'SELECT kind, count() AS rows FROM sealed_live_held WHERE project_id = {project:String} AND stamp = {stamp:UInt64} GROUP BY kind ORDER BY kind', params: { project, stamp } }, read)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(`${project}: the held snapshot's write, medians of ${values.runs}: wall ${median(wall).toFixed(0)} cpu ${median(cpu).toFixed(0)} ms, load ${loadavg()[0]!.toFixed(2)}; rows ${JSON.stringify(kinds)}`)
await rt.close()
