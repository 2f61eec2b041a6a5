/**
 * A build's joins, the planner's choice of sides ('auto') against the sides as written (the builder's
 * `query_plan_join_swap_table = false`), on a project's newest build (benchmarks/README.md, "The
 * sessions step's 4.7 GB on an unsettled 100M directory…"). The steps' statements are recorded as
 * the builder renders them, not run; the build's own tables are read at its newest version.
 *
 *   npx tsx benchmarks/experiments/build-joins.ts plans DIR PROJECT
 *     each step's joins (left ⋈ right, the right side the hash table; estimated rows), both ways
 *   npx tsx benchmarks/experiments/build-joins.ts ab DIR PROJECT RUNS STEP…
 *     each step's INSERT into a scratch copy of its table, both ways interleaved: wall, CPU, peak RSS
 *     above the RSS before it (a lower bound: memory the allocator kept is not counted again), and
 *     the rows' count and hash (bitmaps' bytes may differ with the order they were built in)
 *
 * Parts of events, sessions and session_timeline are kept as they are (SYSTEM STOP MERGES).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { Session } from 'chdb'
import pino from 'pino'
import { loadConfig } from '../../src/config.ts'
import { newestClosing } from '../../src/query/sealed.ts'
import { openRuntime } from '../../src/runtime.ts'
import { sealProject } from '../../src/services/sealed/builder.ts'
import { dataClock } from '../lib/data-clock.ts'
import { quantile } from '../lib/stats.ts'

const [mode, dir, project, runs, ...names] = process.argv.slice(2)
if (!dir || !project || (mode !== 'plans' && mode !== 'ab')) throw new Error('usage: build-joins.ts plans|ab DIR PROJECT [RUNS STEP…]')
const WRITTEN = 'query_plan_join_swap_table = false'
const AUTO = "query_plan_join_swap_table = 'auto'"

const rt = await openRuntime(loadConfig({ ...process.env, QUARRY_DATA_DIR: dir, QUARRY_SEALED: '0', LOG_LEVEL: 'warn' }), pino({ level: 'warn' }))
const { clock } = await dataClock(rt.runner, project)
const [newest] = await rt.runner.rows<{ v: string }>(
  { name: 'newest', sql: 'SELECT toString(max(version)) AS v FROM sealed_builds WHERE project_id = {p:String}', params: { p: project } },
  { timeoutS: 60 },
)
const recorded: { name: string; sql: string; params: Record<string, unknown> }[] = []
rt.runner.command = async (stmt) => {
  if (stmt.name.startsWith('sealed_build_')) {
    recorded.push({ name: `${stmt.name}${stmt.params.from_hours ?? ''}`, sql: stmt.sql, params: { ...stmt.params, version: Number(newest!.v) } })
  }
}
await sealProject(project, { runner: rt.runner, logger: pino({ level: 'warn' }), closedAt: newestClosing(clock), timeoutS: 3600 }).catch(() => {})
await rt.close()

const s = new Session(dir)
s.query('USE quarry')
for (const table of ['events', 'sessions', 'session_timeline']) s.query(`SYSTEM STOP MERGES ${table}`)
const ways = { auto: (sql: string) => sql.replace(WRITTEN, AUTO), written: (sql: string) => sql }

if (mode === 'plans') {
  for (const r of recorded) {
    const select = r.sql.slice(r.sql.search(/\n(SELECT|WITH) /) + 1)
    const [auto, written] = Object.values(ways).map((way) =>
      String(s.queryBind(`EXPLAIN actions=1 ${way(select)}`, r.params, 'TSVRaw'))
        .split('\n')
        .filter((l) => l.includes('⋈'))
        .map((l) => l.replace(/^[│└├─ ]+/, ''))
        .join('; '),
    )
    if (auto || written) console.log(`${r.name}: ${auto === written ? `the same: ${auto}` : `auto ${auto} | as written ${written}`}`)
  }
} else {
  const cpu = () => {
    const u = process.cpuUsage()
    return (u.user + u.system) / 1000
  }
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))![1])
  for (const name of names) {
    const r = recorded.find((x) => x.name === name)
    if (!r) throw new Error(`no step ${name}`)
    const table = /INSERT INTO (\w+)/.exec(r.sql)![1]!
    const costs = { auto: [] as { wall: number; cpu: number; peak: number; rows: string }[], written: [] as { wall: number; cpu: number; peak: number; rows: string }[] }
    for (let i = 0; i < Number(runs); i++) {
      for (const [way, render] of Object.entries(ways) as [keyof typeof ways, (sql: string) => string][]) {
        s.query('DROP TABLE IF EXISTS scratch_copy')
        s.query(`CREATE TABLE scratch_copy AS ${table}`)
        writeFileSync('/proc/self/clear_refs', '5')
        const before = kb('VmRSS')
        const c0 = cpu()
        const t0 = performance.now()
        s.queryBind(render(r.sql).replace(`INSERT INTO ${table}`, 'INSERT INTO scratch_copy'), r.params)
        const wall = performance.now() - t0
        const used = cpu() - c0
        const rows = String(s.query('SELECT count(), hex(sum(cityHash64(*))) FROM (SELECT * EXCEPT (version) FROM scratch_copy)', 'TSV')).trim()
        costs[way].push({ wall, cpu: used, peak: (kb('VmHWM') - before) / 2 ** 20, rows })
      }
    }
    for (const [way, c] of Object.entries(costs)) {
      const med = (xs: number[]) => quantile(xs, 0.5)
      console.log(
        `${name} ${way}: median ${(med(c.map((x) => x.wall)) / 1000).toFixed(1)} s, CPU ${(med(c.map((x) => x.cpu)) / 1000).toFixed(1)} s ` +
          `(${c.map((x) => (x.cpu / 1000).toFixed(1)).join(', ')}), peak +${c.map((x) => x.peak.toFixed(2)).join(', ')} GB, rows/hash ${[...new Set(c.map((x) => x.rows))].join(' / ')}`,
      )
    }
  }
  s.query('DROP TABLE IF EXISTS scratch_copy')
}
