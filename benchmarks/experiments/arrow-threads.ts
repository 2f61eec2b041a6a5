/**
 * Where an HTTP export's server CPU goes, run by run: GET /export/events?format=arrow (or --query)
 * downloaded with curl --rounds times from this process's server, and around each download the CPU of
 * this process's threads grouped by name (/proc/self/task/*\/stat: chDB's pipeline threads are named,
 * libuv's and V8's are "node", the main thread is "main"), its page faults and context switches.
 * With --perf FILE, `perf record -g` samples this process during the downloads only (a control FIFO
 * enables it), into FILE; run node with --perf-basic-prof for JavaScript's symbols.
 * --variants '[{}, {"max_threads": 1}]' alternates settings added to the format's (one download each,
 * in turn, every round). --gc-before (node --expose-gc) runs a full collection before each download.
 *   npx tsx benchmarks/experiments/arrow-threads.ts --dir D [--rounds 4] [--query format=arrow] [--sink /dev/shm] [--perf FILE] [--variants JSON] [--gc-before]
 */
import { execFile, execFileSync, spawn } from 'node:child_process'
import { openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { loadavg } from 'node:os'
import { PerformanceObserver } from 'node:perf_hooks'
import { join } from 'node:path'
import { parseArgs, promisify } from 'node:util'
import { buildApp } from '../../src/app.ts'
import { createClientRow } from '../../src/auth/clients.ts'
import { loadConfig } from '../../src/config.ts'
import { EXPORT_FORMATS } from '../../src/query/export-formats.ts'
import { createLogger } from '../../src/log.ts'
import { openRuntime } from '../../src/runtime.ts'
import { listen } from '../../src/server.ts'

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    rounds: { type: 'string', default: '4' },
    query: { type: 'string', default: 'format=arrow' },
    sink: { type: 'string', default: '/dev/shm' },
    perf: { type: 'string' },
    out: { type: 'string' },
    variants: { type: 'string', default: '[{}]' },
    'gc-before': { type: 'boolean', default: false },
  },
})
if (!values.dir) throw new Error('--dir: a data directory seeded by benchmarks/export-stream.ts')

const config = loadConfig({ ...process.env, QUARRY_DATA_DIR: values.dir, QUARRY_DEMO: '0', LOG_LEVEL: 'warn', QUARRY_RATE_LIMIT: '1000000' })
const rt = await openRuntime(config, createLogger('warn'))
const client = await createClientRow(rt.runner, { type: 'read', projectId: 'bench', organizationId: 'bench', name: 'probe' })
const server = await listen(buildApp({ config, runner: rt.runner, logger: rt.logger, signingKey: rt.signingKey }), '127.0.0.1', 0)
const [{ count }] = (await rt.runner.rows<{ count: number }>(
  { name: 'count', sql: "SELECT count() AS count FROM events WHERE project_id = 'bench'", params: {} },
  { timeoutS: 600 },
)) as [{ count: number }]
const TICK_US = 1e6 / Number(execFileSync('getconf', ['CLK_TCK']).toString())

/** CPU µs by thread name; thread ids that ended between two snapshots drop out (rare: pools persist). */
function threads(): Map<string, { name: string; us: number }> {
  const byTid = new Map<string, { name: string; us: number }>()
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      // Unnamed threads (libuv's pool, V8's workers) apart, by id.
      const name = tid === String(process.pid) ? 'main' : comm === 'node' ? `node/${tid}` : comm
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      byTid.set(tid, { name, us: (Number(fields[11]) + Number(fields[12])) * TICK_US })
    } catch {
      // The thread ended while listed.
    }
  }
  return byTid
}

const control = `${values.perf}.ctl`
const recorder = values.perf
  ? (execFileSync('mkfifo', [control]),
    spawn('perf', ['record', '-g', '-F', '499', '-D', '-1', '--control', `fifo:${control}`, '-p', String(process.pid), '-o', values.perf], { stdio: 'inherit' }))
  : undefined
// Opening the FIFO waits for perf to open it for reading.
const controlFd = recorder ? openSync(control, 'w') : undefined
// Pause time by kind of collection (minor: scavenge, major: mark-compact, …).
const GC_KINDS: Record<number, string> = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weakcb' }
let gcMs: Record<string, number> = {}
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = GC_KINDS[(e as unknown as { detail: { kind: number } }).detail.kind] ?? 'other'
    gcMs[kind] = (gcMs[kind] ?? 0) + e.duration
    gcMs[`${kind}_n`] = (gcMs[`${kind}_n`] ?? 0) + 1
  }
}).observe({ entryTypes: ['gc'] })
const perf = (cmd: 'enable' | 'disable') => controlFd !== undefined && writeSync(controlFd, `${cmd}\n`)
const file = join(values.sink, 'arrow-probe.out')
const results = []
const format = EXPORT_FORMATS[(new URLSearchParams(values.query).get('format') ?? 'arrow') as 'arrow']
const shipped = { ...format.settings }
const variants = JSON.parse(values.variants) as Record<string, string | number>[]
for (let round = 0; round < Number(values.rounds) * variants.length; round++) {
  const variant = variants[round % variants.length]!
  // The statement reads the format's settings when built, per request.
  format.settings = { ...shipped, ...variant }
  await new Promise((r) => setTimeout(r, 1000))
  // A full collection just before (node --expose-gc): V8 then sets the old generation's limit from an
  // idle mutator, the state a server is in when an export starts after a quiet spell.
  if (values['gc-before']) (globalThis as { gc?: () => void }).gc!()
  const before = threads()
  const usage = process.resourceUsage()
  const cpu = process.cpuUsage()
  gcMs = {}
  perf('enable')
  const started = performance.now()
  // Asynchronous: the server answers from this process's event loop.
  await promisify(execFile)('curl', ['-sS', '-f', '-o', file, '-H', `openpanel-client-id: ${client.id}`, '-H', `openpanel-client-secret: ${client.secret}`,
    `http://127.0.0.1:${server.port}/export/events?${values.query}`])
  const seconds = (performance.now() - started) / 1000
  perf('disable')
  const spent = process.cpuUsage(cpu)
  const after = process.resourceUsage()
  const byName = new Map<string, number>()
  for (const [tid, t] of threads()) byName.set(t.name, (byName.get(t.name) ?? 0) + t.us - (before.get(tid)?.us ?? 0))
  rmSync(file)
  const result = {
    round: Math.floor(round / variants.length),
    variant,
    seconds: +seconds.toFixed(2),
    rows_per_s: Math.round(count / seconds),
    server_cpu_us_per_row: +((spent.user + spent.system) / count).toFixed(3),
    cpu_user_s: +(spent.user / 1e6).toFixed(2),
    cpu_system_s: +(spent.system / 1e6).toFixed(2),
    minor_faults: after.minorPageFault - usage.minorPageFault,
    voluntary_switches: after.voluntaryContextSwitches - usage.voluntaryContextSwitches,
    involuntary_switches: after.involuntaryContextSwitches - usage.involuntaryContextSwitches,
    gc_ms: Object.fromEntries(Object.entries(gcMs).map(([k, v]) => [k, Math.round(v)])),
    major_faults: after.majorPageFault - usage.majorPageFault,
    threads_s: Object.fromEntries([...byName].filter(([, us]) => us > 20_000).sort((a, b) => b[1] - a[1]).map(([n, us]) => [n, +(us / 1e6).toFixed(2)])),
    load_1m: +loadavg()[0]!.toFixed(2),
  }
  results.push(result)
  console.log(JSON.stringify(result))
}
if (values.out) writeFileSync(new URL(`../results/${values.out}.json`, import.meta.url), `${JSON.stringify({ query: values.query, results }, null, 2)}\n`)
if (recorder) {
  recorder.kill('SIGINT')
  await new Promise((r) => recorder.once('exit', r))
  rmSync(control)
}
await server.shutdown(1000)
await rt.close()
