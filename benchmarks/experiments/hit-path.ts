/**
 * CPU cost of one cache hit inside the app (no socket), beside GET /healthz: how many hits one core can serve.
 *   npx tsx benchmarks/experiments/hit-path.ts --dir D [--project p051] [--n 20000]
 */
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import pino from 'pino'
import { buildApp } from '../../src/app.ts'
import { createClientRow } from '../../src/auth/clients.ts'
import { configSchema } from '../../src/config.ts'
import { createResponseCache } from '../../src/http/cache/middleware.ts'
import { eventsWatermark } from '../../src/http/cache/watermark.ts'
import { createLogger } from '../../src/log.ts'
import { openRuntime } from '../../src/runtime.ts'

const { values } = parseArgs({ options: { dir: { type: 'string' }, project: { type: 'string', default: 'p051' }, n: { type: 'string', default: '20000' } } })
const config = configSchema.parse({ QUARRY_DATA_DIR: values.dir, QUARRY_DEMO: '0', LOG_LEVEL: 'info', QUARRY_RATE_LIMIT: '1000000000' })
const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: false }))
const rt = await openRuntime(config, logger)
const root = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'default', name: 'hit-path' })
const headers = { 'openpanel-client-id': root.id, 'openpanel-client-secret': root.secret }
const cache = createResponseCache({ now: () => new Date(), watermark: eventsWatermark(rt.runner) })
const app = buildApp({ config, runner: rt.runner, logger, signingKey: rt.signingKey, responseCache: cache })
const hit = `http://127.0.0.1/insights/${values.project}/country?startDate=2026-10-21&endDate=2026-11-20`
// The ceiling (no authentication, no query), a hit as a load generator asks (no Accept-Encoding), and as a browser asks.
const variants: [string, string, Record<string, string>][] = [
  ['GET /healthz', 'http://127.0.0.1/healthz', {}],
  ['cache hit', hit, headers],
  ['cache hit, Accept-Encoding: gzip, deflate, br', hit, { ...headers, 'accept-encoding': 'gzip, deflate, br' }],
]
const n = Number(values.n)
for (const [name, url, h] of variants) {
  for (let i = 0; i < 200; i++) await (await app.request(url, { headers: h })).arrayBuffer()
  const started = performance.now()
  const cpu = process.cpuUsage()
  for (let i = 0; i < n; i++) await (await app.request(url, { headers: h })).arrayBuffer()
  const wall = performance.now() - started
  const used = process.cpuUsage(cpu)
  console.log(`${name}: ${(wall * 1000 / n).toFixed(1)} µs wall, ${((used.user + used.system) / n).toFixed(1)} µs CPU per request → ${Math.round(n / (wall / 1000))} req/s on one thread; load ${loadavg()[0]!.toFixed(2)}`)
}
await rt.close()
