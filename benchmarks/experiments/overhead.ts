/**
 * Where the milliseconds between the bare SQL and the HTTP answer go, for one cheap route.
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx benchmarks/experiments/overhead.ts --dir D [--project p051] [--route live] [--n 3000]
 *   npx tsx benchmarks/experiments/overhead.ts --summarize /tmp/prof/<file>.cpuprofile
 *
 * Runs the route n times in each of four ways, interleaved: bare statement on the engine's client;
 * runner.rows (gate, settings, JSON parse); app.request (the Hono app without a socket); real HTTP.
 * With --cpu-prof the profile's self time, summed by function and by package, shows the rest.
 */
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import pino from 'pino'
import { buildApp } from '../../src/app.ts'
import { createClientRow } from '../../src/auth/clients.ts'
import { configSchema } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import { openRuntime } from '../../src/runtime.ts'
import { listen } from '../../src/server.ts'
import { agent, get } from '../lib/http.mjs'
import { quantile, round } from '../lib/stats.ts'

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    project: { type: 'string', default: 'p051' },
    route: { type: 'string', default: 'live' },
    query: { type: 'string', default: '' },
    n: { type: 'string', default: '2000' },
    summarize: { type: 'string' },
  },
})

if (values.summarize) {
  interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
  const profile = JSON.parse(readFileSync(values.summarize, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] }
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const self = new Map<number, number>()
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
  const total = [...self.values()].reduce((a, b) => a + b, 0)
  const fn = new Map<string, number>()
  const pkg = new Map<string, number>()
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame
    const where = f.url.replace(/^.*node_modules\/(@[^/]+\/[^/]+|[^/]+)\/.*$/, '$1').replace(/^file:\/\/.*\/(src|benchmarks)\//, '$1/').replace(/^node:.*/, 'node')
    const name = `${f.functionName || '(anonymous)'} ${where}${f.url.includes('node_modules') ? '' : `:${f.lineNumber + 1}`}`
    fn.set(name, (fn.get(name) ?? 0) + us)
    pkg.set(where || '(native/idle)', (pkg.get(where || '(native/idle)') ?? 0) + us)
  }
  const show = (m: Map<string, number>, k: number) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([name, us]) => `${((100 * us) / total).toFixed(1).padStart(5)} %  ${name}`).join('\n')
  console.log(`samples ${profile.samples.length}, ${(total / 1e6).toFixed(1)} s\n\nby package/file:\n${show(pkg, 25)}\n\nby function:\n${show(fn, 40)}`)
  process.exit(0)
}

const n = Number(values.n)
const config = configSchema.parse({ QUARRY_DATA_DIR: values.dir, QUARRY_DEMO: '0', LOG_LEVEL: 'info', QUARRY_RATE_LIMIT: '1000000000' })
const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: false }))
const rt = await openRuntime(config, logger)
const root = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'default', name: 'overhead' })
const headers = { 'openpanel-client-id': root.id, 'openpanel-client-secret': root.secret }
const app = buildApp({ config, runner: rt.runner, logger, signingKey: rt.signingKey })
const server = await listen(app, '127.0.0.1', 0)
const path = `/insights/${values.project}/${values.route}${values.query ? `?${values.query}` : ''}`
const keepAlive = agent(1)

const explained = JSON.parse((await get(`http://127.0.0.1:${server.port}${path}${path.includes('?') ? '&' : '?'}explain=sql`, headers, keepAlive)).body.toString())
const sql: string = explained.sql[0]
const params = explained.params
// runner.rows adds the SETTINGS and FORMAT itself: strip what explain shows.
const stripped = sql.replace(/\nSETTINGS [^\n]*\nFORMAT JSONEachRow$/, '')

const ways: Record<string, () => Promise<unknown>> = {
  bare: async () => {
    const r = await rt.engine.client.exec({ query: sql, query_params: params })
    for await (const _ of r.stream) {
      // drained
    }
  },
  runner: () => rt.runner.rows({ name: 'overhead', sql: stripped, params }, { timeoutS: 10 }),
  'app.request': async () => {
    const res = await app.request(`http://127.0.0.1${path}`, { headers })
    await res.arrayBuffer()
  },
  http: () => get(`http://127.0.0.1:${server.port}${path}`, headers, keepAlive),
}
const times: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((k) => [k, []]))
const names = Object.keys(ways)
for (let i = 0; i < n + 20; i++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(i + k) % names.length]!
    const t = performance.now()
    await ways[name]!()
    if (i >= 20) times[name]!.push(performance.now() - t)
  }
}
console.log(`${path}: n=${n}, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
for (const name of names) console.log(`${name.padEnd(12)} p50 ${round(quantile(times[name]!, 0.5), 2)} ms  p90 ${round(quantile(times[name]!, 0.9), 2)} ms`)
await server.shutdown(500)
await rt.close()
