/**
 * Issue 19's two c=32 rows on one data directory, each phase run by a load generator in its own
 * process (lib/load-worker.mjs), phases alternated over several rounds so that their ratio survives
 * a shared machine: `GET /healthz` (no authentication, no query: the ceiling), the warm cache (the
 * aggregate endpoints of a project over a closed 30-day window, pre-warmed), and optionally the same
 * endpoints with no response cache (uncached: every request runs its queries, over the sealed history
 * as `quarry serve` runs it, on a clock half an hour past the project's last event). Each phase also
 * reports the server process's CPU per request (JavaScript and the engine's threads): unlike req/s,
 * it holds on a machine shared with other work.
 *
 * The load generator is autocannon (lib/autocannon-worker.mjs), as the issue asks; `--generator node`
 * runs lib/load-worker.mjs instead, which reads every body whole and also counts cache hits.
 *
 *   npx tsx benchmarks/experiments/warm-throughput.ts DIR PROJECT [--rounds 3] [--seconds 10] [--uncached] [--generator autocannon|node] [--out NAME]
 */
import { writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import pino from 'pino'
import { buildApp } from '../../src/app.ts'
import { createClientRow } from '../../src/auth/clients.ts'
import { configSchema } from '../../src/config.ts'
import { createResponseCache } from '../../src/http/cache/middleware.ts'
import { eventsWatermark } from '../../src/http/cache/watermark.ts'
import { createLogger } from '../../src/log.ts'
import { DIMENSIONS } from '../../src/query/dimensions.ts'
import { listen } from '../../src/server.ts'
import { SealedHistory } from '../../src/services/sealed/index.ts'
import { openSealedProject } from '../lib/sealed-project.ts'
import { agent, get } from '../lib/http.mjs'
import { runLoadWorker } from '../lib/run-load-worker.ts'
import { quantile, round, summarize } from '../lib/stats.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '10' }, concurrency: { type: 'string', default: '32' }, uncached: { type: 'boolean', default: false }, generator: { type: 'string', default: 'autocannon' }, out: { type: 'string' } },
})
const [dir, project] = positionals
if (!dir || !project) throw new Error('usage: warm-throughput.ts DIR PROJECT [--rounds N] [--seconds S] [--uncached] [--generator autocannon|node] [--out NAME]')
if (values.generator !== 'autocannon' && values.generator !== 'node') throw new Error('--generator must be autocannon or node')
const concurrency = Number(values.concurrency)
const durationMs = Number(values.seconds) * 1000

const config = configSchema.parse({ QUARRY_DATA_DIR: dir, QUARRY_DEMO: '0', LOG_LEVEL: 'info', QUARRY_RATE_LIMIT: '1000000000', QUARRY_MAX_QUEUED_QUERIES: '1024', QUARRY_SEALED: '0' })
// Access logs are written, as in production, to /dev/null.
const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: false }))
// Sealed first (reusing a build made for this clock), so that no build runs during a phase.
const { rt, clock } = await openSealedProject(dir, project, true)
const now = () => clock.toJSDate()
const sealed = new SealedHistory({ runner: rt.runner, logger, now, queryTimeoutS: config.QUARRY_QUERY_TIMEOUT_S, rebuildIntervalMs: 3_600_000 })
const client = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'default', name: 'warm-throughput' })
const headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
const cache = createResponseCache({ now: () => new Date(), watermark: eventsWatermark(rt.runner) })
const deps = { config, runner: rt.runner, logger, signingKey: rt.signingKey }
const cached = await listen(buildApp({ ...deps, responseCache: cache }), '127.0.0.1', 0)
const plain = await listen(buildApp({ ...deps, now, sealed, responseCache: false }), '127.0.0.1', 0)

// A closed window: the 30 whole days before the data's last day, so entries live their long TTL.
const end = clock.startOf('day')
const window = `startDate=${end.minus({ days: 30 }).toISODate()}&endDate=${end.minus({ days: 1 }).toISODate()}`
const paths = ['metrics', 'pages', ...DIMENSIONS.map((d) => d.name)].map((e) => `/insights/${project}/${e}?${window}`)
const warmUrls = paths.map((p) => `http://127.0.0.1:${cached.port}${p}`)
const keepAlive = agent(1)
for (const url of warmUrls) {
  const r = await get(url, headers, keepAlive)
  if (r.status !== 200) throw new Error(`${url}: ${r.status}`)
}

interface Phase { name: string; round: number; rps: number; serverCpuUs: number; clientCpuUs?: number; p50: number; p99: number; statuses: Record<string, number>; cache?: Record<string, number>; load: number }
interface NodeReport { elapsedMs: number; latencies: number[]; statuses: Record<string, number>; cache: Record<string, number> }
interface AutocannonReport { elapsedMs: number; requests: number; statuses: Record<string, number>; latency: { p50: number; p99: number }; cpuUs: number }
/** One phase's requests, p50/p99 and the rest, whichever generator ran it. */
const generate = async (urls: string[], h: Record<string, string>) => {
  const job = { urls, headers: h, concurrency, mode: 'shared', durationMs }
  if (values.generator === 'node') {
    const r = await runLoadWorker<NodeReport>(job)
    const latency = summarize(r.latencies)
    return { n: r.latencies.length, elapsedMs: r.elapsedMs, p50: latency.p50, p99: latency.p99, statuses: r.statuses, cache: r.cache }
  }
  const r = await runLoadWorker<AutocannonReport>(job, 'autocannon-worker.mjs')
  return { n: r.requests, elapsedMs: r.elapsedMs, p50: r.latency.p50, p99: r.latency.p99, statuses: r.statuses, clientCpuUs: r.cpuUs }
}
const phases: Phase[] = []
const run = async (name: string, round_: number, urls: string[], h: Record<string, string>) => {
  const cpu = process.cpuUsage()
  const { n, elapsedMs, clientCpuUs, ...r } = await generate(urls, h)
  const used = process.cpuUsage(cpu)
  const phase: Phase = {
    name,
    round: round_,
    rps: round(n / (elapsedMs / 1000), 1),
    serverCpuUs: round((used.user + used.system) / n, 1),
    ...(clientCpuUs === undefined ? {} : { clientCpuUs: round(clientCpuUs / n, 1) }),
    ...r,
    load: round(loadavg()[0]!, 2),
  }
  phases.push(phase)
  const client = phase.clientCpuUs === undefined ? '' : `, generator ${phase.clientCpuUs}`
  console.log(
    `round ${round_} ${name}: ${phase.rps} req/s, CPU per request: server ${phase.serverCpuUs} µs${client}; p50 ${phase.p50} p99 ${phase.p99} ms, ${JSON.stringify(r.statuses)}${r.cache ? ` ${JSON.stringify(r.cache)}` : ''}, load ${phase.load}`,
  )
  return phase
}
const ratios: number[] = []
for (let i = 1; i <= Number(values.rounds); i++) {
  const ceiling = await run('healthz', i, [`http://127.0.0.1:${cached.port}/healthz`], {})
  const warm = await run('warm cache', i, warmUrls, headers)
  ratios.push(round(warm.rps / ceiling.rps, 3))
  console.log(`round ${i}: warm / healthz = ${ratios.at(-1)}`)
  if (values.uncached) await run('uncached', i, paths.map((p) => `http://127.0.0.1:${plain.port}${p}`), headers)
}
console.log(`warm / healthz per round: ${ratios.join(', ')}; median ${quantile(ratios, 0.5)}`)
if (values.out) writeFileSync(`benchmarks/results/${values.out}.json`, JSON.stringify({ dir, project, window, concurrency, seconds: durationMs / 1000, phases, ratios }, null, 1))
await cached.shutdown(1000)
await plain.shutdown(1000)
await rt.close()
