/**
 * Requests while a sealed build runs in the same process, on the embedded engine: one request at a
 * time (a breakdown, unsealed), every 100 ms from the build's start to its end, with the build's
 * statements in the background lane (src/clickhouse/engine/background.ts) and, alternately, in the
 * requests' line as before it. Prints each way's request latency (p50, p90, max), the requests that
 * failed (a 504: a query not done within its deadline, counted from asking for a slot) and the
 * build's time.
 *
 *   npx tsx benchmarks/experiments/requests-during-build.ts DATA_DIR PROJECT [ROUNDS] [lane,line]
 */
import { loadavg } from 'node:os'
import pino from 'pino'
import { buildApp } from '../../src/app.ts'
import { createClientRow } from '../../src/auth/clients.ts'
import type { QueryRunner } from '../../src/clickhouse/run.ts'
import { loadConfig } from '../../src/config.ts'
import { newestClosing } from '../../src/query/sealed.ts'
import { openRuntime } from '../../src/runtime.ts'
import { sealProject } from '../../src/services/sealed/builder.ts'
import { dataClock } from '../lib/data-clock.ts'

const [dir, project, roundsArg = '2', waysArg = 'lane,line'] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: requests-during-build.ts DATA_DIR PROJECT [ROUNDS]')
const logger = pino({ level: 'warn' })
const rt = await openRuntime(loadConfig({ ...process.env, QUARRY_DATA_DIR: dir, QUARRY_SEALED: '0' }), logger)
const { clock } = await dataClock(rt.runner, project)
const config = { ...rt.config, QUARRY_RATE_LIMIT: 1_000_000, QUARRY_SEALED: false }
const app = buildApp({ config, runner: rt.runner, logger, signingKey: rt.signingKey, now: () => clock.toJSDate(), responseCache: false as const })
const client = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'default', name: 'during-build' })
const headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
const request = async () => {
  const started = performance.now()
  const res = await app.request(`http://q/insights/${project}/country?range=30d`, { headers })
  await res.text()
  return { ms: performance.now() - started, ok: res.status === 200 }
}
/** The requests' line: the runner without the background option, as builds ran before the lane. */
const inLine: QueryRunner = { ...rt.runner, command: (stmt) => rt.runner.command(stmt) }
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!

console.log(`${project}: a request every 100 ms during a build, load ${loadavg()[0]!.toFixed(1)}\n`)
console.log('| build statements | build s | requests | failed | p50 ms | p90 ms | max ms | load |\n|---|--:|--:|--:|--:|--:|--:|--:|')
for (let round = 0; round < Number(roundsArg); round++) {
  for (const lane of waysArg.split(',').map((way) => way === 'lane')) {
    let done = false
    const build = sealProject(project, { runner: lane ? rt.runner : inLine, logger, closedAt: newestClosing(clock), timeoutS: 900 }).finally(() => (done = true))
    const times: number[] = []
    let failed = 0
    while (!done) {
      const { ms, ok } = await request()
      times.push(ms)
      if (!ok) failed++
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const ms = (await build)?.ms
    const f = (x: number) => x.toFixed(0)
    console.log(`| ${lane ? 'background lane' : 'requests’ line'} | ${((ms ?? 0) / 1000).toFixed(1)} | ${times.length} | ${failed} | ${f(quantile(times, 0.5))} | ${f(quantile(times, 0.9))} | ${f(Math.max(...times))} | ${loadavg()[0]!.toFixed(1)} |`)
  }
}
await rt.close()
