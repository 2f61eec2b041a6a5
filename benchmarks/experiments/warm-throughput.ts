/**
 * Issue 19's two c=32 rows on one data directory, each phase run by a load generator in its own
 * process (lib/load-worker.mjs), phases alternated over several rounds so that their ratio survives
 * a shared machine: `GET /healthz` (no authentication, no query: the ceiling), the warm cache (the
 * aggregate endpoints of a project over a closed 30-day window, pre-warmed), and optionally the same
 * endpoints with no response cache (uncached: every request runs its queries).
 *
 *   npx tsx benchmarks/experiments/warm-throughput.ts DIR PROJECT [--rounds 3] [--seconds 10] [--uncached] [--out NAME]
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
import { openRuntime } from '../../src/runtime.ts'
import { listen } from '../../src/server.ts'
import { dataClock } from '../lib/data-clock.ts'
import { agent, get } from '../lib/http.mjs'
import { runLoadWorker } from '../lib/run-load-worker.ts'
import { round, summarize, type Summary } from '../lib/stats.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '10' }, concurrency: { type: 'string', default: '32' }, uncached: { type: 'boolean', default: false }, out: { type: 'string' } },
})
const [dir, project] = positionals
if (!dir || !project) throw new Error('usage: warm-throughput.ts DIR PROJECT [--rounds N] [--seconds S] [--uncached] [--out NAME]')
const concurrency = Number(values.concurrency)
const durationMs = Number(values.seconds) * 1000

const config = configSchema.parse({ QUARRY_DATA_DIR: dir, QUARRY_DEMO: '0', LOG_LEVEL: 'info', QUARRY_RATE_LIMIT: '1000000000', QUARRY_MAX_QUEUED_QUERIES: '1024', QUARRY_SEALED: '0' })
// Access logs are written, as in production, to /dev/null.
const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: false }))
const rt = await openRuntime(config, logger)
const client = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'default', name: 'warm-throughput' })
const headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
const cache = createResponseCache({ now: () => new Date(), watermark: eventsWatermark(rt.runner) })
const deps = { config, runner: rt.runner, logger, signingKey: rt.signingKey }
const cached = await listen(buildApp({ ...deps, responseCache: cache }), '127.0.0.1', 0)
const plain = await listen(buildApp({ ...deps, responseCache: false }), '127.0.0.1', 0)

// A closed window: the 30 whole days before the data's last day, so entries live their long TTL.
const { clock } = await dataClock(rt.runner, project)
const end = clock.startOf('day')
const window = `startDate=${end.minus({ days: 30 }).toISODate()}&endDate=${end.minus({ days: 1 }).toISODate()}`
const paths = ['metrics', 'pages', ...DIMENSIONS.map((d) => d.name)].map((e) => `/insights/${project}/${e}?${window}`)
const warmUrls = paths.map((p) => `http://127.0.0.1:${cached.port}${p}`)
const keepAlive = agent(1)
for (const url of warmUrls) {
  const r = await get(url, headers, keepAlive)
  if (r.status !== 200) throw new Error(`${url}: ${r.status}`)
}

interface Phase { name: string; round: number; rps: number; latency: Summary; statuses: Record<string, number>; cache: Record<string, number>; load: number }
const phases: Phase[] = []
const run = async (name: string, round_: number, urls: string[], h: Record<string, string>) => {
  const r = await runLoadWorker<{ elapsedMs: number; latencies: number[]; statuses: Record<string, number>; cache: Record<string, number> }>({ urls, headers: h, concurrency, mode: 'shared', durationMs })
  const phase = { name, round: round_, rps: round(r.latencies.length / (r.elapsedMs / 1000), 1), latency: summarize(r.latencies), statuses: r.statuses, cache: r.cache, load: round(loadavg()[0]!, 2) }
  phases.push(phase)
  console.log(`round ${round_} ${name}: ${phase.rps} req/s, p50 ${phase.latency.p50} p99 ${phase.latency.p99} ms, ${JSON.stringify(r.statuses)} ${JSON.stringify(r.cache)}, load ${phase.load}`)
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
const sorted = [...ratios].sort((a, b) => a - b)
console.log(`warm / healthz per round: ${ratios.join(', ')}; median ${sorted[sorted.length >> 1]}`)
if (values.out) writeFileSync(`benchmarks/results/${values.out}.json`, JSON.stringify({ dir, project, window, concurrency, seconds: durationMs / 1000, phases, ratios }, null, 1))
await cached.shutdown(1000)
await plain.shutdown(1000)
await rt.close()
