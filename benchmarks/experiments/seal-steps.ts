/**
 * Where a full sealed build's time goes: seals the project once (a new build, as `quarry serve`
 * makes it, on a clock half an hour past its last event) and prints each step's wall and CPU time
 * from the builder's debug log (the process's CPU between one step's end and the next: chDB runs in
 * it), the process's peak RSS, and a hash of each table's rows of the build (its version left out),
 * so that two variants of the builder can be checked to write the same rows.
 *
 *   npx tsx benchmarks/experiments/seal-steps.ts DATA_DIR PROJECT
 *
 * SEAL_STOP_MERGES=events,sessions,session_timeline keeps those tables' parts as they are while it
 * runs (chDB merges whenever a process has the directory open): the same unsettled state, run after run.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import pino from 'pino'
import { loadConfig } from '../../src/config.ts'
import { newestClosing } from '../../src/query/sealed.ts'
import { openRuntime } from '../../src/runtime.ts'
import { sealProject } from '../../src/services/sealed/builder.ts'
import { printBuildHashes } from '../lib/build-hashes.ts'
import { dataClock } from '../lib/data-clock.ts'

const [dir, project] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: seal-steps.ts DATA_DIR PROJECT')
const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
// A step's peak RSS: the kernel's high-water mark since the step before's end, where it is reset
// (`5` to clear_refs) to the RSS of the moment.
const peakRss = () => {
  const bytes = Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024
  writeFileSync('/proc/self/clear_refs', '5')
  buildPeak = Math.max(buildPeak, bytes)
  return bytes
}
// The reset lowers getrusage's maxRSS too: the build's peak is the steps' highest.
let buildPeak = 0
const steps: { step: string; table?: string; ms: number; cpu: number; rss: number }[] = []
let lastCpu = 0
const logger = pino(
  { level: 'debug' },
  {
    write: (line: string) => {
      const entry = JSON.parse(line)
      if (entry.msg !== 'sealed build step') return
      const now = cpuMs()
      steps.push({ ...entry, cpu: now - lastCpu, rss: peakRss() })
      lastCpu = now
    },
  },
)
const rt = await openRuntime(loadConfig({ ...process.env, QUARRY_DATA_DIR: dir, QUARRY_SEALED: '0', LOG_LEVEL: 'warn' }), pino({ level: 'warn' }))
for (const table of (process.env.SEAL_STOP_MERGES ?? '').split(',').filter(Boolean)) {
  await rt.runner.command({ name: 'stop_merges', sql: `SYSTEM STOP MERGES ${table}`, params: {} })
}
const { clock } = await dataClock(rt.runner, project)
const load = loadavg()[0]!
const started = performance.now()
const cpuStarted = (lastCpu = cpuMs())
peakRss()
await sealProject(project, { runner: rt.runner, logger, closedAt: newestClosing(clock), timeoutS: 3600 })
const total = performance.now() - started
peakRss()
const totalCpu = cpuMs() - cpuStarted
const byStep = new Map<string, { ms: number; cpu: number; rss: number }>()
for (const s of steps) {
  const key = s.table ? `${s.step} ${s.table}` : s.step
  const sum = byStep.get(key) ?? { ms: 0, cpu: 0, rss: 0 }
  byStep.set(key, { ms: sum.ms + s.ms, cpu: sum.cpu + s.cpu, rss: Math.max(sum.rss, s.rss) })
}
const gb = (bytes: number) => (bytes / 2 ** 30).toFixed(2)
const s = (ms: number) => (ms / 1000).toFixed(1)
console.log(
  `${project}: whole build ${s(total)} s, CPU ${s(totalCpu)} s, load ${load.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}, peak RSS ${(buildPeak / 2 ** 30).toFixed(2)} GB\n`,
)
console.log('| step | s | CPU s | peak RSS GB |\n|---|--:|--:|--:|')
for (const [step, t] of [...byStep].sort((a, b) => b[1].ms - a[1].ms)) console.log(`| ${step} | ${s(t.ms)} | ${s(t.cpu)} | ${gb(t.rss)} |`)
const stepsMs = steps.reduce((n, x) => n + x.ms, 0)
const stepsCpu = steps.reduce((n, x) => n + x.cpu, 0)
console.log(`| the rest (insert counts, dropping the old build) | ${s(total - stepsMs)} | ${s(totalCpu - stepsCpu)} |`)

// Each table's rows of the build just made, to compare builds.
const read = { timeoutS: 600 }
const [{ version }] = (await rt.runner.rows<{ version: string }>(
  { name: 'newest', sql: 'SELECT toString(max(version)) AS version FROM sealed_builds WHERE project_id = {p:String}', params: { p: project } },
  read,
)) as [{ version: string }]
await printBuildHashes(rt.runner, project, version)
await rt.close()
