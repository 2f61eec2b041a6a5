/**
 * Variants of the funnel-by-person statement against each other on one sealed build, interleaved
 * (a rotating order per round), with the placeholders sealedFunnel gives the request: per variant
 * the median wall and CPU time (the embedded engine runs in this process) and whether its rows
 * equal the first variant's.
 *   QUARRY_DATA_DIR=… npx tsx benchmarks/experiments/funnel-people-variants.ts --project pl [--runs 7] [--steps 3|5] [--range 30d|7d|today|…] [--snapshot] A.sql B.sql …
 * A variant is a file of SQL with the slots of insights_funnel_people_sealed.sql ({{conditions}} over
 * `xs`, {{episode_conditions}} over `ks`, {{name_bit}}, {{held_sources}} as the request would have them), or `@people` / `@session`: this tree's statement by person
 * or per session for the same request. Before/after a change of build: the old statement, its table
 * names pointed at a copy of the old build's table, against `@people` on the new build. With
 * --snapshot, the numbered profiles after C are written first (sealed_live_profiles, as the planner
 * writes them for the product routes) and what funnels by person need of the people the events after C
 * hold (sealed_live_held, as the funnel route has it written), and variants get their stamp as {stamp:UInt64}.
 */
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { loadConfig } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import { sealedLiveProfilesWriteStatement } from '../../src/query/product/sealed-product.ts'
import { NAME_BIT, sealedFunnel, sealedLiveHeldWriteStatement } from '../../src/query/product/sealed-units.ts'
import { productRange } from '../../src/query/product/window.ts'
import type { RangeName } from '../../src/query/time-range.ts'
import { readSealedLatest, sealedLatestStatement, type SealedLatestRow } from '../../src/query/sealed.ts'
import { renderSql } from '../../src/query/sql-templates.ts'
import { openRuntime } from '../../src/runtime.ts'
import { dataClock } from '../lib/data-clock.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { project: { type: 'string', default: 'pl' }, runs: { type: 'string', default: '7' }, steps: { type: 'string', default: '3' }, range: { type: 'string', default: '30d' }, snapshot: { type: 'boolean', default: false } },
})
const project = values.project!
const rt = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' as const, QUARRY_SEALED: false }, createLogger('warn'))
const read = { timeoutS: 600 }
const now = (await dataClock(rt.runner, project)).clock.toJSDate()
const [row] = await rt.runner.rows<SealedLatestRow>(sealedLatestStatement([project]), read)
const built = readSealedLatest(row)!.build
const stamp = values.snapshot ? Date.now() : undefined
if (stamp !== undefined) {
  await rt.runner.command(sealedLiveProfilesWriteStatement(project, built, stamp))
  const c = process.cpuUsage()
  const t = performance.now()
  await rt.runner.command(sealedLiveHeldWriteStatement(project, built, stamp))
  const used = process.cpuUsage(c)
  console.log(`held snapshot written: wall ${(performance.now() - t).toFixed(0)} cpu ${((used.user + used.system) / 1000).toFixed(0)} ms`)
}
const build = { ...built, ...(stamp === undefined ? {} : { liveStamp: stamp, heldStamp: stamp }) }
const steps = values.steps === '5' ? ['screen_view', 'search', 'add_to_cart', 'checkout', 'revenue'] : ['screen_view', 'add_to_cart', 'checkout']
const req = { projectId: project, range: productRange({ range: values.range as RangeName }, 'UTC', now, '30d'), filters: [], groupBy: 'profile_id' as const, windowHours: 24, steps }
const params = { ...sealedFunnel(req)!(build).params, ...(stamp === undefined ? {} : { stamp }) }
const number = (step: string) => steps.indexOf(step) + 1
const slots = {
  name_bit: NAME_BIT,
  held_sources: renderSql(stamp === undefined ? '_funnel_people_held' : '_funnel_people_held_snapshot'),
  conditions: steps.map((step) => `arrayMap(x -> x % 16 = ${15 - number(step)}, xs)`).join(', '),
  episode_conditions: steps.map((step) => `arrayMap(k -> k = ${number(step)}, ks)`).join(', '),
}
const variants = positionals.map((file) =>
  file === '@session' || file === '@people'
    ? { ...sealedFunnel({ ...req, groupBy: file === '@session' ? 'session_id' : 'profile_id' })!(build), file }
    : { name: file, file, params, sql: readFileSync(file, 'utf8').replace(/\{\{(\w+)\}\}/g, (_, slot: keyof typeof slots) => slots[slot]) },
)
const wall = variants.map((): number[] => [])
const cpu = variants.map((): number[] => [])
const rows = variants.map((): string[] => [])
const runs = Number(values.runs)
const loads: number[] = []
for (let i = 0; i < runs + 1; i++) {
  for (let k = 0; k < variants.length; k++) {
    const j = (i + k) % variants.length
    const c = process.cpuUsage()
    const t = performance.now()
    const out = await rt.runner.rows(variants[j]!, { ...read, readonly: true })
    const ms = performance.now() - t
    const used = process.cpuUsage(c)
    rows[j]!.push(JSON.stringify(out))
    if (i === 0) continue
    wall[j]!.push(ms)
    cpu[j]!.push((used.user + used.system) / 1000)
  }
  loads.push(loadavg()[0]!)
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(`${project}, ${steps.length} steps, medians of ${runs}, load ${median(loads).toFixed(2)} (${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)})`)
variants.forEach((v, j) =>
  console.log(`${v.file}\twall ${median(wall[j]!).toFixed(0)}\tcpu ${median(cpu[j]!).toFixed(0)}\tsame ${rows[j]!.every((r) => r === rows[0]![0])}\t${rows[j]![0]!.slice(0, 200)}`),
)
await rt.close()
