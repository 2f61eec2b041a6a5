/**
 * Shared by the chaos scenarios: a real `quarry serve` process on a seeded data directory, its
 * resident memory read from /proc, and a bounded open-loop load generator over loopback.
 */
import type { ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import { join } from 'node:path'
import { finished, quarry, ROOT, startQuarry, waitForStderr, type CliResult } from '../helpers/cli.ts'

export const MB = 1024 * 1024

const RESULTS = join(ROOT, 'benchmarks/results/chaos.json')

/** Records one scenario's figures in benchmarks/results/chaos.json, keeping the others. */
export function recordChaos(name: string, figures: Record<string, unknown>) {
  mkdirSync(join(ROOT, 'benchmarks/results'), { recursive: true })
  let all: Record<string, unknown> = {}
  try {
    all = JSON.parse(readFileSync(RESULTS, 'utf8')) as Record<string, unknown>
  } catch {
    // first scenario to write
  }
  all.machine = { cores: cpus().length, memory_gb: Math.round(totalmem() / 1024 ** 3), node: process.version }
  // The load average says how much else the machine was doing while it was measured.
  all[name] = { ...figures, load_average_1m: Math.round(loadavg()[0]! * 100) / 100, measured_at: new Date().toISOString() }
  writeFileSync(RESULTS, `${JSON.stringify(all, null, 2)}\n`)
}


export interface ServerProcess {
  child: ChildProcess
  exited: Promise<CliResult>
  base: string
  pid: number
}

/** Seeds `project` with `events` events over 30 days and returns a read client's headers. */
export async function seedDataDir(dir: string, project: string, events: number): Promise<Record<string, string>> {
  const seeded = await quarry(dir, ['seed', '--project', project, '--events', String(events), '--days', '30'])
  if (seeded.code !== 0) throw new Error(`seed failed: ${seeded.stderr}`)
  const created = await quarry(dir, ['clients', 'create', '--type', 'read', '--project', project])
  if (created.code !== 0) throw new Error(`clients create failed: ${created.stderr}`)
  const client = JSON.parse(created.stdout) as { id: string; secret: string }
  return { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
}

/** `quarry serve` on an ephemeral loopback port (read from its "listening" log line). */
export async function startServer(dir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const child = startQuarry(dir, ['serve'], { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', QUARRY_RATE_LIMIT: '1000000000', ...env })
  const exited = finished(child)
  const seen = await waitForStderr(child, '"listening"', 60_000)
  const port = Number(/"port":(\d+)/.exec(seen)?.[1])
  if (!port) throw new Error(`no port in: ${seen}`)
  return { child, exited, base: `http://127.0.0.1:${port}`, pid: child.pid! }
}

/** Resident set size now and at its peak (VmHWM), in bytes, of a process. */
export function rssOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024
  return { rss: kb('VmRSS'), peak: kb('VmHWM') }
}

/** Resets the peak RSS counter (VmHWM) of a process we own, so a later peak is the scenario's own. */
export function resetPeak(pid: number): boolean {
  try {
    // "5" to clear_refs resets the peak RSS (Linux ≥ 4.0); harmless when not permitted.
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

export interface Sample {
  start: number
  ms: number
  /** 0 when the request failed without a response (connection refused or reset, client timeout). */
  status: number
  error?: string
}

export const percentile = (values: number[], p: number): number => {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits

/** One request, timed; the body is read to the end (or the client gives up after `timeoutMs`). */
export async function timed(url: string, headers: Record<string, string>, timeoutMs: number): Promise<Sample> {
  const start = performance.now()
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) })
    await res.arrayBuffer()
    return { start, ms: performance.now() - start, status: res.status }
  } catch (err) {
    return { start, ms: performance.now() - start, status: 0, error: (err as Error).name === 'TimeoutError' ? 'client_timeout' : String((err as Error).cause ?? err) }
  }
}

/**
 * Closed loop: `workers` clients each send their next request when the previous one is answered,
 * for `seconds`. The completion rate of 200s is what the server sustains at that concurrency.
 */
export type Target = string | (() => string)
const urlOf = (t: Target) => (typeof t === 'string' ? t : t())

export async function closedLoop(url: Target, headers: Record<string, string>, workers: number, seconds: number): Promise<{ samples: Sample[]; rps: number }> {
  const samples: Sample[] = []
  const started = performance.now()
  const end = started + seconds * 1000
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < end) samples.push(await timed(urlOf(url), headers, 60_000))
    }),
  )
  const elapsed = (performance.now() - started) / 1000
  return { samples, rps: samples.filter((s) => s.status === 200).length / elapsed }
}

/**
 * Open loop: a request every 1/rate seconds for `seconds`, whatever the answers, with at most
 * `maxInFlight` outstanding (beyond it the generator counts a skip rather than growing itself).
 */
export async function openLoop(
  url: Target,
  headers: Record<string, string>,
  opts: { rate: number; seconds: number; timeoutMs: number; maxInFlight: number; onTick?: () => void },
): Promise<{ samples: Sample[]; sent: number; skipped: number; stoppedAt: number }> {
  const samples: Sample[] = []
  const pending = new Set<Promise<void>>()
  const started = performance.now()
  const intervalMs = 1000 / opts.rate
  let sent = 0
  let skipped = 0
  let next = started
  const end = started + opts.seconds * 1000
  while (performance.now() < end) {
    const now = performance.now()
    // Catch up on every slot that is due (timers on a busy loop fire late).
    while (next <= now && next < end) {
      next += intervalMs
      if (pending.size >= opts.maxInFlight) {
        skipped++
        continue
      }
      sent++
      const p = timed(urlOf(url), headers, opts.timeoutMs).then((s) => void samples.push(s))
      pending.add(p)
      void p.finally(() => pending.delete(p))
    }
    opts.onTick?.()
    await new Promise((r) => setTimeout(r, Math.max(0, Math.min(5, next - performance.now()))))
  }
  const stoppedAt = performance.now()
  await Promise.all(pending)
  return { samples, sent, skipped, stoppedAt }
}
