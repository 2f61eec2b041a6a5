/**
 * The sealed product statements of this tree against the same statements of an earlier tree, in
 * one process on one seeded project with a sealed build: per cell, both run once per round in
 * alternating order (engine time, medians), and their rows compared (sorted, so that a change of
 * order alone does not count). The earlier tree is a copy of src and sql at a commit, e.g.
 *   git archive REV src sql | tar -x -C /tmp/base-REV && ln -s "$PWD/node_modules" /tmp/base-REV/
 *   QUARRY_DATA_DIR=… npx tsx benchmarks/experiments/product-compare.ts --base /tmp/base-REV --project pl [--runs 9] [--only funnel]
 * Each tree reads the newest build of its own SEALED_FORMAT (a tree that changed the format reads
 * a build made by it, e.g. by product-latency.ts), and where a tree writes the profiles after C
 * (sealed_live_profiles) they are written under a stamp first, as the planner does once per state
 * of the events after C, and its build carries the stamp.
 */
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import type { Statement } from '../../src/clickhouse/run.ts'
import { loadConfig } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import * as activeUsers from '../../src/query/product/active-users.ts'
import * as retention from '../../src/query/product/retention.ts'
import * as product from '../../src/query/product/sealed-product.ts'
import * as units from '../../src/query/product/sealed-units.ts'
import * as window from '../../src/query/product/window.ts'
import * as sealed from '../../src/query/sealed.ts'
import type { SealedBuild, SealedLatestRow } from '../../src/query/sealed.ts'
import { openRuntime } from '../../src/runtime.ts'
import { round } from '../lib/stats.ts'
import { dataClock } from '../lib/data-clock.ts'

const { values } = parseArgs({
  options: { base: { type: 'string' }, project: { type: 'string', default: 'pl' }, runs: { type: 'string', default: '9' }, only: { type: 'string' } },
})
if (!values.base) throw new Error('--base DIR: a copy of src and sql of the tree to compare with')
const project = values.project!

interface Tree {
  activeUsers: typeof activeUsers
  product: typeof product
  units: typeof units
  sealed: typeof sealed
}
const load = async (dir: string): Promise<Tree> => ({
  activeUsers: await import(`${dir}/src/query/product/active-users.ts`),
  product: await import(`${dir}/src/query/product/sealed-product.ts`),
  units: await import(`${dir}/src/query/product/sealed-units.ts`),
  sealed: await import(`${dir}/src/query/sealed.ts`),
})
const trees = { base: await load(values.base), this: { activeUsers, product, units, sealed } as Tree }

const rt = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' as const, QUARRY_SEALED: false }, createLogger('warn'))
const now = (await dataClock(rt.runner, project)).clock.toJSDate()
/** Each tree's newest build of its own format (a tree that changed the format reads the build made for it). */
const builds = new Map<Tree, SealedBuild>()
for (const tree of Object.values(trees)) {
  const [row] = await rt.runner.rows<SealedLatestRow>(tree.sealed.sealedLatestStatement([project]), { timeoutS: 60 })
  let build = tree.sealed.readSealedLatest(row)!.build
  if ('sealedLiveProfilesWriteStatement' in tree.product) {
    const stamp = Date.now()
    const started = performance.now()
    await rt.runner.command(tree.product.sealedLiveProfilesWriteStatement(project, build, stamp))
    console.log(`sealed_live_profiles_write: ${round(performance.now() - started, 0)} ms, load ${loadavg()[0]!.toFixed(2)}`)
    build = { ...build, liveStamp: stamp }
  }
  builds.set(tree, build)
}

const range = window.productRange({ range: '30d' }, 'UTC', now, '30d')
const whole = window.allTime(now, 'UTC')
const unit = { projectId: project, range, filters: [], groupBy: 'session_id' as const }
const FUNNEL3 = ['screen_view', 'add_to_cart', 'checkout']
const FUNNEL5 = ['screen_view', 'search', 'add_to_cart', 'checkout', 'revenue']
const cohortRange = retention.defaultCohortRange(now, 'UTC')
const allCells: { name: string; statement: (t: Tree) => Statement }[] = [
  { name: 'funnel 3 steps, session, 30d', statement: (t) => t.units.sealedFunnel({ ...unit, steps: FUNNEL3, windowHours: 24 })!(builds.get(t)!) },
  { name: 'funnel 5 steps, session, 30d', statement: (t) => t.units.sealedFunnel({ ...unit, steps: FUNNEL5, windowHours: 24 })!(builds.get(t)!) },
  { name: 'funnel 3 steps, profile, 30d', statement: (t) => t.units.sealedFunnel({ ...unit, groupBy: 'profile_id', steps: FUNNEL3, windowHours: 24 })!(builds.get(t)!) },
  { name: 'funnel 5 steps, profile, 30d', statement: (t) => t.units.sealedFunnel({ ...unit, groupBy: 'profile_id', steps: FUNNEL5, windowHours: 24 })!(builds.get(t)!) },
  {
    name: 'user_flow 5 steps, 30d',
    statement: (t) => t.units.sealedFlow({ ...unit, startEvent: 'screen_view', mode: 'after', steps: 5, include: [], exclude: [] })!(builds.get(t)!),
  },
  { name: 'active_users?days=30', statement: (t) => t.activeUsers.sealedActiveUsers({ projectId: project, range: whole, days: 30, allTime: true })!(builds.get(t)!) },
  { name: 'active_users?days=30, 30d window', statement: (t) => t.activeUsers.sealedActiveUsers({ projectId: project, range, days: 30, allTime: false })!(builds.get(t)!) },
  { name: 'retention', statement: (t) => t.product.sealedRetention({ projectId: project, range: whole, filters: [] })!(builds.get(t)!) },
  {
    name: 'retention/cohort',
    statement: (t) => t.product.sealedCohort({ projectId: project, range: cohortRange, filters: [] }, retention.cohortColumns(cohortRange), now)!(builds.get(t)!),
  },
  { name: 'engagement', statement: (t) => t.product.sealedEngagement(project, 'UTC', now)!(builds.get(t)!) },
]
const cells = allCells.filter((c) => values.only === undefined || values.only.split(',').some((part) => c.name.includes(part)))

const sortedRows = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).sort()
const runs = Number(values.runs)
const loadStart = loadavg().map((l) => round(l, 2))
const times = cells.map(() => ({ base: [] as number[], this: [] as number[] }))
// The engine runs in this process: its CPU time, less noisy than wall time on a shared machine.
const cpu = cells.map(() => ({ base: [] as number[], this: [] as number[] }))
for (const cell of cells) {
  const [a, b] = [await rt.runner.rows(cell.statement(trees.base), { timeoutS: 60 }), await rt.runner.rows(cell.statement(trees.this), { timeoutS: 60 })]
  const same = JSON.stringify(sortedRows(a)) === JSON.stringify(sortedRows(b))
  console.log(`${cell.name}: ${a.length} rows, ${same ? 'same rows' : 'ROWS DIFFER'}`)
  if (!same) process.exitCode = 1
}
for (let r = 0; r < runs; r++) {
  for (const [i, cell] of cells.entries()) {
    for (const which of r % 2 === 0 ? (['base', 'this'] as const) : (['this', 'base'] as const)) {
      const statement = cell.statement(trees[which])
      const started = performance.now()
      const used = process.cpuUsage()
      await rt.runner.rows(statement, { timeoutS: 60 })
      times[i]![which].push(performance.now() - started)
      const { user, system } = process.cpuUsage(used)
      cpu[i]![which].push((user + system) / 1000)
    }
  }
}
const median = (xs: number[]) => round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!, 0)
for (const [i, cell] of cells.entries()) {
  const [t, c] = [times[i]!, cpu[i]!]
  console.log(`${cell.name}: base ${median(t.base)} ms (CPU ${median(c.base)}), this ${median(t.this)} ms (CPU ${median(c.this)}) (medians of ${runs})`)
}
console.log(`load average at start ${loadStart.join(' ')}, at end ${loadavg().map((l) => round(l, 2)).join(' ')}`)
await rt.close()
