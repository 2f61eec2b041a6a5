/**
 * One server with the response cache, under autocannon c=32 in its own process, on one phase only
 * (`healthz` or `warm`), after a warm-up of both: run it under `node --cpu-prof` to see where a
 * request's CPU goes in the server alone.
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx benchmarks/experiments/warm-profile.ts DIR PROJECT healthz|warm [SECONDS=8]
 */
import { loadavg } from 'node:os'
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
import { agent, get } from '../lib/http.mjs'
import { runLoadWorker } from '../lib/run-load-worker.ts'

const [dir, project, what, secs = '8'] = process.argv.slice(2)
if (!dir || !project || (what !== 'healthz' && what !== 'warm')) throw new Error('usage: warm-profile.ts DIR PROJECT healthz|warm [SECONDS]')
const config = configSchema.parse({ QUARRY_DATA_DIR: dir, QUARRY_DEMO: '0', LOG_LEVEL: 'info', QUARRY_RATE_LIMIT: '1000000000', QUARRY_MAX_QUEUED_QUERIES: '1024', QUARRY_SEALED: '0' })
const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: false }))
const rt = await openRuntime(config, logger)
const client = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'default', name: 'profile' })
const headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
const cache = createResponseCache({ now: () => new Date(), watermark: eventsWatermark(rt.runner) })
const srv = await listen(buildApp({ config, runner: rt.runner, logger, signingKey: rt.signingKey, responseCache: cache }), '127.0.0.1', 0)
const window = 'startDate=2026-10-01&endDate=2026-10-30'
const warm = ['metrics', 'pages', ...DIMENSIONS.map((d) => d.name)].map((e) => `http://127.0.0.1:${srv.port}/insights/${project}/${e}?${window}`)
const ka = agent(1)
for (const url of warm) if ((await get(url, headers, ka)).status !== 200) throw new Error(url)
const load = (urls: string[], h: Record<string, string>, s: number) =>
  runLoadWorker<{ requests: number; elapsedMs: number; statuses: Record<string, number> }>({ urls, headers: h, concurrency: 32, mode: 'shared', durationMs: s * 1000 }, 'autocannon-worker.mjs')
// Both paths warmed by the JIT first, so that the profile is of steady state.
await load([`http://127.0.0.1:${srv.port}/healthz`], {}, 2)
await load(warm, headers, 2)
const urls = what === 'healthz' ? [`http://127.0.0.1:${srv.port}/healthz`] : warm
const cpu = process.cpuUsage()
const r = await load(urls, what === 'warm' ? headers : {}, Number(secs))
const used = process.cpuUsage(cpu)
console.log(`${what}: ${(r.requests / (r.elapsedMs / 1000)).toFixed(0)} req/s, ${((used.user + used.system) / r.requests).toFixed(1)} µs CPU per request, ${JSON.stringify(r.statuses)}, load ${loadavg()[0]!.toFixed(2)}`)
await srv.shutdown(500)
await rt.close()
