/**
 * CPU per cache hit (and per `GET /healthz`) in process, no socket, for two versions of the code in
 * ONE process: app A from BASE (a copy of an earlier tree, as warm-ab.ts takes it), app B from this
 * tree (or OTHER), batches alternating A and B with their order flipped every round, so that a
 * shared machine's load falls on both alike. It resolves differences of a few µs per request that
 * the socket runs (warm-ab.ts) cannot; what it leaves out is the node server and the write.
 *
 *   npx tsx benchmarks/experiments/hit-ab.ts DIR PROJECT BASE [ROUNDS=15] [N=3000] [OTHER]
 */
import { loadavg } from 'node:os'
import pino from 'pino'
import { createClientRow } from '../../src/auth/clients.ts'
import { configSchema } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import { DIMENSIONS } from '../../src/query/dimensions.ts'
import { openRuntime } from '../../src/runtime.ts'

const [dir, project, base, rounds = '15', n = '3000', other] = process.argv.slice(2)
if (!dir || !project || !base) throw new Error('usage: hit-ab.ts DIR PROJECT BASE [ROUNDS] [N] [OTHER]')
const config = configSchema.parse({ QUARRY_DATA_DIR: dir, QUARRY_DEMO: '0', LOG_LEVEL: 'info', QUARRY_RATE_LIMIT: '1000000000', QUARRY_SEALED: '0' })
const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: false }))
const rt = await openRuntime(config, logger)
const client = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'default', name: 'hit-ab' })
const headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
const window = 'startDate=2026-10-01&endDate=2026-10-30'
const urls = ['metrics', 'pages', ...DIMENSIONS.map((d) => d.name)].map((e) => `http://127.0.0.1/insights/${project}/${e}?${window}`)
type App = { request: (url: string, init: RequestInit) => Promise<Response> }
const build = async (root: string): Promise<App> => {
  const { buildApp } = await import(`${root}/src/app.ts`)
  const { createResponseCache } = await import(`${root}/src/http/cache/middleware.ts`)
  const { eventsWatermark } = await import(`${root}/src/http/cache/watermark.ts`)
  const cache = createResponseCache({ now: () => new Date(), watermark: eventsWatermark(rt.runner) })
  const app: App = buildApp({ config, runner: rt.runner, logger, signingKey: rt.signingKey, responseCache: cache })
  for (const url of urls) if ((await app.request(url, { headers })).status !== 200) throw new Error(url)
  return app
}
const apps = { A: await build(base), B: await build(other ?? new URL('../..', import.meta.url).pathname.replace(/\/$/, '')) }
const cpu: Record<string, number[]> = {}
const batch = async (name: 'A' | 'B', what: 'healthz' | 'hit') => {
  const app = apps[name]
  const used = process.cpuUsage()
  for (let i = 0; i < Number(n); i++) {
    const r = what === 'hit' ? await app.request(urls[i % urls.length]!, { headers }) : await app.request('http://127.0.0.1/healthz', {})
    if (r.status !== 200) throw new Error(`${name} ${what}: ${r.status}`)
    await r.arrayBuffer()
  }
  const u = process.cpuUsage(used)
  ;(cpu[`${name} ${what}`] ??= []).push((u.user + u.system) / Number(n))
}
const med = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2 }
for (let i = 0; i < 3; i++) for (const name of ['A', 'B'] as const) { await batch(name, 'healthz'); await batch(name, 'hit') }
for (const k of Object.keys(cpu)) cpu[k] = []
for (let i = 0; i < Number(rounds); i++) {
  for (const name of (i % 2 ? ['B', 'A'] : ['A', 'B']) as ('A' | 'B')[]) { await batch(name, 'healthz'); await batch(name, 'hit') }
}
for (const [k, v] of Object.entries(cpu)) console.log(`${k}: median ${med(v).toFixed(1)} µs CPU per request (${v.map((x) => x.toFixed(0)).join(' ')})`)
const diffs = cpu['B hit']!.map((b, i) => b - cpu['A hit']![i]!)
console.log(`B - A per hit, paired by round: median ${med(diffs).toFixed(1)} µs, B lower in ${diffs.filter((d) => d < 0).length} of ${diffs.length}; load ${loadavg()[0]!.toFixed(2)}`)
await rt.close()
