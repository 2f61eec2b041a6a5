/**
 * Where a full sealed build's time goes: seals the project once (a new build, as `quarry serve`
 * makes it, on a clock half an hour past its last event) and prints each step's time from the
 * builder's debug log, with the process's peak RSS (chDB runs in it).
 *
 *   npx tsx benchmarks/experiments/seal-steps.ts DATA_DIR PROJECT
 */
import { loadavg } from 'node:os'
import pino from 'pino'
import { loadConfig } from '../../src/config.ts'
import { newestClosing } from '../../src/query/sealed.ts'
import { openRuntime } from '../../src/runtime.ts'
import { sealProject } from '../../src/services/sealed/builder.ts'
import { dataClock } from '../lib/data-clock.ts'

const [dir, project] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: seal-steps.ts DATA_DIR PROJECT')
const steps: { step: string; table?: string; ms: number }[] = []
const logger = pino({ level: 'debug' }, { write: (line: string) => void (JSON.parse(line).msg === 'sealed build step' && steps.push(JSON.parse(line))) })
const rt = await openRuntime(loadConfig({ ...process.env, QUARRY_DATA_DIR: dir, QUARRY_SEALED: '0', LOG_LEVEL: 'warn' }), pino({ level: 'warn' }))
const { clock } = await dataClock(rt.runner, project)
const load = loadavg()[0]!
const started = performance.now()
await sealProject(project, { runner: rt.runner, logger, closedAt: newestClosing(clock), timeoutS: 3600 })
const total = performance.now() - started
const byStep = new Map<string, number>()
for (const s of steps) byStep.set(s.table ? `${s.step} ${s.table}` : s.step, (byStep.get(s.table ? `${s.step} ${s.table}` : s.step) ?? 0) + s.ms)
console.log(`${project}: whole build ${(total / 1000).toFixed(1)} s, load ${load.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}, peak RSS ${(process.resourceUsage().maxRSS / 2 ** 20).toFixed(2)} GB\n`)
console.log('| step | s |\n|---|--:|')
for (const [step, ms] of [...byStep].sort((a, b) => b[1] - a[1])) console.log(`| ${step} | ${(ms / 1000).toFixed(1)} |`)
console.log(`| the rest (insert counts, dropping the old build) | ${((total - steps.reduce((n, s) => n + s.ms, 0)) / 1000).toFixed(1)} |`)
await rt.close()
