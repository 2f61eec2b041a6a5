/**
 * The warm cache against `GET /healthz` at c=32 for two versions of the code in ONE process, so
 * that a shared machine's load falls on both alike: app A from BASE (a copy of an earlier tree),
 * app B from this tree, over one runtime on DIR. Each round runs A's two phases and B's (the order
 * flipped every round), autocannon in its own process (lib/autocannon-worker.mjs), and reports
 * req/s and the process's CPU per request. The warm phase asks a project's 22 aggregate endpoints
 * over a closed window, pre-warmed, as warm-throughput.ts does.
 *
 *   git archive REV src | tar -x -C BASE; ln -s $PWD/sql $PWD/node_modules BASE/
 *   npx tsx benchmarks/experiments/warm-ab.ts DIR PROJECT BASE [ROUNDS=5] [SECONDS=6] [OTHER]
 *
 * OTHER, a second copy, is app B instead of this tree: with the two swapped, a bias of the slot shows.
 */
import { loadavg } from 'node:os'
import pino from 'pino'
import { createClientRow } from '../../src/auth/clients.ts'
import { configSchema } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import { DIMENSIONS } from '../../src/query/dimensions.ts'
import { openRuntime } from '../../src/runtime.ts'
import { runLoadWorker } from '../lib/run-load-worker.ts'
import { agent, get } from '../lib/http.mjs'

const [dir, project, base, rounds = '5', secs = '6', other] = process.argv.slice(2)
if (!dir || !project || !base) throw new Error('usage: warm-ab.ts DIR PROJECT BASE [ROUNDS] [SECONDS]')
const config = configSchema.parse({ QUARRY_DATA_DIR: dir, QUARRY_DEMO: '0', LOG_LEVEL: 'info', QUARRY_RATE_LIMIT: '1000000000', QUARRY_MAX_QUEUED_QUERIES: '1024', QUARRY_SEALED: '0' })
const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: false }))
const rt = await openRuntime(config, logger)
const client = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'default', name: 'ab' })
const headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
// A closed window of 30 days (the cache keeps it its long TTL; the answers' rows do not matter here).
const window = 'startDate=2026-10-01&endDate=2026-10-30'
const serve = async (root: string) => {
  const { buildApp } = await import(`${root}/src/app.ts`)
  const { createResponseCache } = await import(`${root}/src/http/cache/middleware.ts`)
  const { eventsWatermark } = await import(`${root}/src/http/cache/watermark.ts`)
  const { listen } = await import(`${root}/src/server.ts`)
  const cache = createResponseCache({ now: () => new Date(), watermark: eventsWatermark(rt.runner) })
  const srv = await listen(buildApp({ config, runner: rt.runner, logger, signingKey: rt.signingKey, responseCache: cache }), '127.0.0.1', 0)
  const paths = ['metrics', 'pages', ...DIMENSIONS.map((d) => d.name)].map((e) => `http://127.0.0.1:${srv.port}/insights/${project}/${e}?${window}`)
  const ka = agent(1)
  for (const url of paths) { const r = await get(url, headers, ka); if (r.status !== 200) throw new Error(`${url}: ${r.status}`) }
  return { srv, warm: paths, healthz: [`http://127.0.0.1:${srv.port}/healthz`] }
}
const apps = { A: await serve(base), B: await serve(other ?? new URL('../..', import.meta.url).pathname.replace(/\/$/, '')) }
const results: Record<string, { rps: number[]; cpu: number[] }> = {}
const phase = async (name: 'A' | 'B', what: 'healthz' | 'warm') => {
  const urls = apps[name][what]
  const cpu = process.cpuUsage()
  const r = await runLoadWorker<{ requests: number; elapsedMs: number; statuses: Record<string, number> }>({ urls, headers: what === 'warm' ? headers : {}, concurrency: 32, mode: 'shared', durationMs: Number(secs) * 1000 }, 'autocannon-worker.mjs')
  const used = process.cpuUsage(cpu)
  const rps = r.requests / (r.elapsedMs / 1000)
  const us = (used.user + used.system) / r.requests
  const k = `${name} ${what}`
  ;(results[k] ??= { rps: [], cpu: [] }).rps.push(rps)
  results[k].cpu.push(us)
  if (Object.keys(r.statuses).some((s) => s !== '200')) console.log('statuses', k, r.statuses)
  return rps
}
const med = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2 }
for (let i = 0; i < Number(rounds); i++) {
  const order: ('A' | 'B')[] = i % 2 ? ['B', 'A'] : ['A', 'B']
  const line: string[] = []
  for (const n of order) {
    const h = await phase(n, 'healthz')
    const w = await phase(n, 'warm')
    line.push(`${n} healthz ${h.toFixed(0)} warm ${w.toFixed(0)} (${(w / h).toFixed(3)}) cpu ${results[`${n} healthz`]!.cpu.at(-1)!.toFixed(0)}/${results[`${n} warm`]!.cpu.at(-1)!.toFixed(0)} µs`)
  }
  console.log(`round ${i + 1}: ${line.join(' | ')}; load ${loadavg()[0]!.toFixed(2)}`)
}
for (const [k, v] of Object.entries(results)) console.log(`${k}: median ${med(v.rps).toFixed(0)} req/s, ${med(v.cpu).toFixed(1)} µs CPU per request`)
for (const n of ['A', 'B']) {
  const ratios = results[`${n} warm`]!.rps.map((w, i) => w / results[`${n} healthz`]!.rps[i]!)
  console.log(`${n} warm/healthz per round ${ratios.map((r) => r.toFixed(3)).join(', ')}; median ${med(ratios).toFixed(3)}`)
}
await apps.A.srv.shutdown(500)
await apps.B.srv.shutdown(500)
await rt.close()
