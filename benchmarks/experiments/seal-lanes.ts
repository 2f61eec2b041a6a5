/**
 * A full sealed build with its steps in two lanes side by side, measured before the engine has a
 * second one (throwaway, for issue 19): two chDB sessions of the background lane's kind, opened
 * here, each running one statement at a time; a step starts once the steps whose tables it reads
 * are done, and the steps listed in HEAVY (those whose memory peaks highest alone) never run
 * together. Then the compactions, two at a time, the build's row, the builds before it dropped.
 * Prints the wall, the CPU, the process's peak RSS and, per lane, what ran when; then each table's
 * hash as seal-steps prints it (compare with seal-steps on the same directory and clock).
 *
 *   npx tsx benchmarks/experiments/seal-lanes.ts DATA_DIR PROJECT [LANES=2]
 *
 * HEAVY=sealed_build_sessions,... overrides the default set ('' for none).
 */
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { DateTime } from 'luxon'
import pino from 'pino'
import { Session } from 'chdb'
import { loadConfig } from '../../src/config.ts'
import { newestClosing, SEALED_FORMAT } from '../../src/query/sealed.ts'
import { renderSql } from '../../src/query/sql-templates.ts'
import { clickhouseInstant } from '../../src/query/time-range.ts'
import { openRuntime } from '../../src/runtime.ts'
import { buildSteps, dropBuildsBefore, tablesToCompact } from '../../src/services/sealed/builder.ts'
import { printBuildHashes } from '../lib/build-hashes.ts'
import { dataClock } from '../lib/data-clock.ts'

const [dir, project, lanesArg] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: seal-lanes.ts DATA_DIR PROJECT [LANES]')
const laneCount = Number(lanesArg ?? 2)
const HEAVY = new Set(
  (process.env.HEAVY ?? 'sealed_build_sessions,sealed_build_page_views,sealed_build_person_events,sealed_build_event_postings').split(',').filter(Boolean),
)
const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
const hwm = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024
const config = loadConfig({ ...process.env, QUARRY_DATA_DIR: dir, QUARRY_SEALED: '0', LOG_LEVEL: 'warn' })
const rt = await openRuntime(config, pino({ level: 'warn' }))
const { clock: dataNow } = await dataClock(rt.runner, project)
const read = { timeoutS: 3600 }
const load = loadavg()[0]!
const started = performance.now()
const cpuStarted = cpuMs()
const [clock] = await rt.runner.rows<{ now: string; previous: number }>({ name: 'sealed_clock', sql: renderSql('sealed_clock'), params: { project } }, read)
const built = clock!.now
const version = DateTime.fromSQL(built, { zone: 'UTC' }).toMillis()
const params = { project, version, closed: clickhouseInstant(newestClosing(dataNow)) }

// What each step reads of the build (the tables of the steps before it), as step ids: the merged
// rollups run twice, so an id is the name and its occurrence.
const steps = buildSteps(params, 3600).map((s, i, all) => ({ ...s, id: `${s.stmt.name}#${all.slice(0, i).filter((t) => t.stmt.name === s.stmt.name).length}` }))
const short = (id: string) => id.replace('sealed_build_', '').replace('#0', '')
const after: Record<string, string[]> = {
  event_visitors: ['visitors'],
  sessions: ['event_visitors'],
  event_postings: ['sessions'],
  session_days: ['sessions'],
  session_keys: ['sessions'],
  revenue_events: ['sessions'],
  dimension_revenue: ['revenue_events'],
  rollups: ['sessions'],
  merged: ['rollups'],
  rollup_last: ['merged'],
  rollup_last_blocks: ['rollup_last'],
  totals: ['rollup_last_blocks'],
  'merged#1': ['totals'],
  event_halves: ['event_visitors'],
  events: ['event_halves'],
  event_days: ['events'],
  profiles: ['event_visitors'],
  profile_days: ['profiles'],
  person_events: ['event_visitors', 'device_profiles'],
  page_keys: ['page_held'],
  page_views: ['page_keys', 'sessions', 'event_visitors'],
  page_days: ['page_views'],
  page_entries: ['page_days', 'sessions'],
  page_blocks: ['page_entries'],
  page_countries: ['page_blocks', 'sessions'],
  page_ends: ['page_countries'],
}
// The order a free lane takes ready steps in: the long chains' heads first.
const PRIORITY = ['visitors', 'session_events', 'event_visitors', 'sessions', 'device_profiles', 'page_held', 'page_keys', 'person_events', 'page_views']
const rank = (id: string) => (PRIORITY.includes(short(id)) ? PRIORITY.indexOf(short(id)) : PRIORITY.length)
const pending = [...steps].sort((a, b) => rank(a.id) - rank(b.id))
const done = new Set<string>()
const running = new Set<string>()
// The engine's lane (src/clickhouse/engine/background.ts) as it runs a statement, but with a values
// table per lane: two of its lanes would share one table and number their jobs alike.
function openLane(n: number) {
  const values = `quarry_bench_lane_values_${n}`
  const session = (async () => {
    const s = new Session(dir!)
    await s.queryAsync(`USE ${config.CLICKHOUSE_DATABASE}`)
    await s.queryAsync('SET os_thread_priority = 19')
    await s.queryAsync(`CREATE TABLE IF NOT EXISTS ${values} (job UInt64, name String, value String) ENGINE = Memory`)
    return s
  })()
  let jobs = 0
  return {
    async command(sql: string, params: Record<string, unknown>) {
      const s = await session
      const job = ++jobs
      const rows = Object.entries(params).map(([name, value]) => JSON.stringify({ job, name, value: String(value) }))
      await s.insert({ table: values, values: Buffer.from(`${rows.join('\n')}\n`), format: 'JSONEachRow' })
      try {
        await s.queryAsync(sql.replace(/\{(\w+):([^{}]+)\}/g, (_, name: string, type: string) => `CAST((SELECT value FROM ${values} WHERE job = ${job} AND name = '${name}'), '${type.replaceAll("'", "\\'")}')`))
      } finally {
        await s.queryAsync(`ALTER TABLE ${values} DELETE WHERE job = ${job} SETTINGS mutations_sync = 2`)
      }
    },
    async close() {
      ;(await session).close()
    },
  }
}
const lanes = Array.from({ length: laneCount }, (_, n) => openLane(n))
const log: { lane: number; step: string; from: number; to: number }[] = []
let peak = 0

async function lane(n: number, wake: () => Promise<void>): Promise<void> {
  for (;;) {
    const heavyRunning = [...running].some((id) => HEAVY.has(id.replace(/#\d+$/, '')))
    const i = pending.findIndex((s) => (after[short(s.id)] ?? []).every((d) => done.has(`sealed_build_${d.includes('#') ? d : `${d}#0`}`)) && !(heavyRunning && HEAVY.has(s.stmt.name)))
    if (i < 0) {
      if (pending.length === 0) return
      await wake()
      continue
    }
    const [s] = pending.splice(i, 1)
    running.add(s!.id)
    const from = performance.now() - started
    await lanes[n]!.command(s!.stmt.sql, s!.stmt.params)
    running.delete(s!.id)
    done.add(s!.id)
    log.push({ lane: n, step: short(s!.id), from, to: performance.now() - started })
    peak = Math.max(peak, hwm())
    notify()
  }
}
let waiters: (() => void)[] = []
const notify = () => {
  const w = waiters
  waiters = []
  for (const f of w) f()
}
const wake = () => new Promise<void>((r) => waiters.push(r))
await Promise.all(lanes.map((_, n) => lane(n, wake)))
const stepsMs = performance.now() - started

const compactions = await tablesToCompact(rt.runner, project, version, read.timeoutS)
const compactStarted = performance.now()
await Promise.all(
  lanes.map(async (l, n) => {
    for (let t = compactions.shift(); t; t = compactions.shift()) {
      const from = performance.now() - started
      await l.command(renderSql('versioned_compact', { table: t }), { project, version })
      log.push({ lane: n, step: `compact ${t}`, from, to: performance.now() - started })
    }
  }),
)
const compactMs = performance.now() - compactStarted
await lanes[0]!.command(renderSql('sealed_register'), { ...params, format: SEALED_FORMAT, built, since: built, inserts: 0, build_ms: Math.round(performance.now() - started) })
if (clock!.previous > 0) await dropBuildsBefore(rt.runner, project, version, 3600)
const total = performance.now() - started
peak = Math.max(peak, hwm())
const s = (ms: number) => (ms / 1000).toFixed(1)
console.log(
  `${project}: ${laneCount} lanes, whole build ${s(total)} s (steps ${s(stepsMs)}, compactions ${s(compactMs)}), CPU ${s(cpuMs() - cpuStarted)} s, load ${load.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}, peak RSS ${(peak / 2 ** 30).toFixed(2)} GB, heavy apart: ${[...HEAVY].map((h) => h.replace('sealed_build_', '')).join(' ')}\n`,
)
for (const l of log.sort((a, b) => a.from - b.from)) console.log(`lane ${l.lane}  ${s(l.from).padStart(6)} → ${s(l.to).padStart(6)}  ${s(l.to - l.from).padStart(5)} s  ${l.step}`)

await printBuildHashes(rt.runner, project, version)
for (const l of lanes) await l.close()
await rt.close()
