/**
 * What metrics and tracing cost per request (issue 24). One engine, three apps on their own ports,
 * identical but for their instrumentation:
 *   off      no metrics (buildApp({ metrics: false }), a runner without telemetry), no tracing;
 *   metrics  Prometheus metrics as quarry serve has them, tracing unset (no span is made at all);
 *   tracing  metrics, and a span per request and per engine statement exported over OTLP/HTTP
 *            (protobuf, batched) to a receiver on loopback that reads and drops the bodies.
 *
 *   npx tsx benchmarks/ops-overhead.ts --dir D [--project p051] [--n 300] [--rounds 5] [--load-rounds 12] [--seconds 5] [--out benchmarks/results/ops-overhead]
 *
 * D holds a seeded project: quarry seed --project p051 --events 1000000 --days 30 (QUARRY_DATA_DIR=D).
 *
 * c=1: each iteration sends one request to each app in turn (rotating order), keep-alive, so the
 * three see the same machine; p50 per round and route (--n iterations for /live, a fifth of that
 * for the breakdown). c=32, /healthz and /live (on a breakdown the engine's time hides everything
 * else): a load worker (own process) sends 32 concurrent streams to one app for --seconds, the apps
 * in rotating order each round; throughput = 200s / elapsed, and this process's CPU per request.
 * The gate queues without refusing, so every app answers everything. Ratios are per round, then
 * their median.
 */
import { writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import pino from 'pino'
import { buildApp } from '../src/app.ts'
import { createClientRow } from '../src/auth/clients.ts'
import { createQueryRunner } from '../src/clickhouse/run.ts'
import { configSchema } from '../src/config.ts'
import { createLogger } from '../src/log.ts'
import { openRuntime } from '../src/runtime.ts'
import { listen } from '../src/server.ts'
import { createMetrics } from '../src/telemetry/metrics.ts'
import { openTracing } from '../src/telemetry/tracing.ts'
import { agent, get } from './lib/http.mjs'
import { runLoadWorker } from './lib/run-load-worker.ts'
import { quantile, round } from './lib/stats.ts'

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    project: { type: 'string', default: 'p051' },
    n: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '5' },
    'load-rounds': { type: 'string', default: '12' },
    seconds: { type: 'string', default: '5' },
    out: { type: 'string' },
  },
})
if (!values.dir) throw new Error('--dir D: a data directory with a seeded project')
const n = Number(values.n)
const rounds = Number(values.rounds)
/**
 * A route without a query (only the HTTP instruments and the request span show), a cheap query,
 * and a typical breakdown, which runs a fifth as many c=1 iterations.
 */
const ROUTES = { healthz: '/healthz', live: `/insights/${values.project}/live`, 'country 30d': `/insights/${values.project}/country?range=30d` }
const LOADED: (keyof typeof ROUTES)[] = ['healthz', 'live']
const iterations = (route: string) => (route === 'country 30d' ? Math.ceil(n / 5) : n)

// A collector stand-in: reads each export and answers success, as a collector would.
let spanBytes = 0
const receiver = createServer((req, res) => {
  req.on('data', (c: Buffer) => (spanBytes += c.byteLength))
  req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end())
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`

const config = configSchema.parse({
  QUARRY_DATA_DIR: values.dir,
  QUARRY_DEMO: '0',
  LOG_LEVEL: 'info',
  QUARRY_RATE_LIMIT: '1000000000',
  QUARRY_SEALED: '0',
  QUARRY_MAX_QUEUED_QUERIES: '100000',
  QUARRY_MAX_QUEUE_WAIT_MS: '600000',
  QUARRY_QUERY_TIMEOUT_S: '60',
})
const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: false }))
const rt = await openRuntime(config, logger)
const root = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'default', name: 'ops-overhead' })
const headers = { 'openpanel-client-id': root.id, 'openpanel-client-secret': root.secret }

const tracing = openTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: 'quarry-bench', OTEL_SDK_DISABLED: false })!
const base = { config, logger, signingKey: rt.signingKey }
const withMetrics = () => {
  const metrics = createMetrics({ process: true })
  metrics.watch({ gate: rt.gate })
  return metrics
}
const metricsOnly = withMetrics()
const traced = withMetrics()
const apps = {
  off: buildApp({ ...base, runner: createQueryRunner(rt.engine, rt.gate, logger), metrics: false }),
  metrics: buildApp({ ...base, runner: createQueryRunner(rt.engine, rt.gate, logger, { metrics: metricsOnly }), metrics: metricsOnly }),
  tracing: buildApp({ ...base, runner: createQueryRunner(rt.engine, rt.gate, logger, { metrics: traced, tracing }), metrics: traced, tracing }),
}
type Variant = keyof typeof apps
const VARIANTS = Object.keys(apps) as Variant[]
const servers = Object.fromEntries(await Promise.all(VARIANTS.map(async (v) => [v, await listen(apps[v], '127.0.0.1', 0)] as const)))
const urlOf = (v: Variant, path: string) => `http://127.0.0.1:${servers[v]!.port}${path}`
const agents = Object.fromEntries(VARIANTS.map((v) => [v, agent(1)])) as Record<Variant, ReturnType<typeof agent>>

async function once(v: Variant, path: string): Promise<number> {
  const r = await get(urlOf(v, path), headers, agents[v])
  if (r.status !== 200) throw new Error(`${v} ${path}: ${r.status} ${r.body.toString().slice(0, 200)}`)
  return r.ms
}

const loadWorker = (url: string, durationMs: number) =>
  runLoadWorker<{ elapsedMs: number; latencies: number[]; statuses: Record<string, number> }>({ urls: [url], headers, concurrency: 32, mode: 'shared', durationMs })

const median = (xs: number[]) => quantile(xs, 0.5)
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ')
const perVariant = <T>(f: (v: Variant) => T) => Object.fromEntries(VARIANTS.map((v) => [v, f(v)])) as Record<Variant, T>

const c1: { route: string; round: number; p50: Record<Variant, number>; load: string }[] = []
for (const [route, path] of Object.entries(ROUTES)) {
  for (const v of VARIANTS) for (let i = 0; i < 20; i++) await once(v, path)
  for (let r = 0; r < rounds; r++) {
    const times = perVariant(() => [] as number[])
    for (let i = 0; i < iterations(route); i++) {
      for (let k = 0; k < VARIANTS.length; k++) {
        const v = VARIANTS[(i + k + r) % VARIANTS.length]!
        times[v].push(await once(v, path))
      }
    }
    const p50 = perVariant((v) => round(median(times[v]), 3))
    c1.push({ route, round: r + 1, p50, load: load() })
    console.log(`c=1 ${route} round ${r + 1}: p50 ${JSON.stringify(p50)} ms; load ${load()}`)
  }
}

const c32: { route: string; round: number; rps: Record<Variant, number>; cpuUs: Record<Variant, number>; other: Record<Variant, number>; load: string }[] = []
for (const route of LOADED) for (let r = 0; r < Number(values['load-rounds']); r++) {
  const rps = {} as Record<Variant, number>
  const cpuUs = {} as Record<Variant, number>
  const other = {} as Record<Variant, number>
  for (let k = 0; k < VARIANTS.length; k++) {
    const v = VARIANTS[(k + r) % VARIANTS.length]!
    // This process's CPU (server and engine) per answered request: what other processes take from
    // the machine changes how long a request waits, hardly how much CPU it costs.
    const cpu = process.cpuUsage()
    const w = await loadWorker(urlOf(v, ROUTES[route]), Number(values.seconds) * 1000)
    const used = process.cpuUsage(cpu)
    const ok = w.statuses['200'] ?? 0
    rps[v] = round((ok * 1000) / w.elapsedMs, 1)
    cpuUs[v] = round((used.user + used.system) / Math.max(1, ok), 0)
    other[v] = w.latencies.length - ok
  }
  c32.push({ route, round: r + 1, rps, cpuUs, other, load: load() })
  console.log(`c=32 ${route} round ${r + 1}: ${JSON.stringify(rps)} req/s; CPU µs/request ${JSON.stringify(cpuUs)}; not 200: ${JSON.stringify(other)}; load ${load()}`)
}

await tracing.flush()
const ratioOf = <T>(rows: T[], f: (x: T) => number) => round(median(rows.map(f)), 3)
const summary = {
  c1: Object.keys(ROUTES).map((route) => {
    const rows = c1.filter((x) => x.route === route)
    return {
      route,
      p50: perVariant((v) => round(median(rows.map((x) => x.p50[v])), 3)),
      /** > 1: slower. Per round, then the median. */
      metricsRatio: ratioOf(rows, (x) => x.p50.metrics / x.p50.off),
      tracingRatio: ratioOf(rows, (x) => x.p50.tracing / x.p50.metrics),
    }
  }),
  c32: LOADED.map((route) => {
    const rows = c32.filter((x) => x.route === route)
    return {
      route,
      rps: perVariant((v) => round(median(rows.map((x) => x.rps[v])), 1)),
      cpuUs: perVariant((v) => round(median(rows.map((x) => x.cpuUs[v])), 0)),
      /** < 1: fewer requests per second. */
      metricsRatio: ratioOf(rows, (x) => x.rps.metrics / x.rps.off),
      tracingRatio: ratioOf(rows, (x) => x.rps.tracing / x.rps.metrics),
      /** > 1: more CPU per request. */
      metricsCpuRatio: ratioOf(rows, (x) => x.cpuUs.metrics / x.cpuUs.off),
      tracingCpuRatio: ratioOf(rows, (x) => x.cpuUs.tracing / x.cpuUs.metrics),
    }
  }),
}
console.log(JSON.stringify(summary, null, 2))
console.log(`span export bytes received: ${spanBytes}`)
if (values.out) {
  const settings = { n, rounds, loadRounds: Number(values['load-rounds']), seconds: Number(values.seconds) }
  writeFileSync(`${values.out}.json`, `${JSON.stringify({ when: new Date().toISOString(), settings, c1, c32, summary, spanBytes }, null, 2)}\n`)
}
for (const v of VARIANTS) {
  agents[v]!.destroy()
  await servers[v]!.shutdown(500)
}
await tracing.shutdown()
await rt.close()
receiver.close()
