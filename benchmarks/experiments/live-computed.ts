/**
 * What a request pays when it computes the sessions after C itself (no snapshot written yet, the
 * path of the first request after an insert if it did not wait for the write) against reading the
 * snapshot, per M route, interleaved in one process on the same rows (medians of RUNS):
 *
 *   npx tsx benchmarks/experiments/live-computed.ts DIR PROJECT [RUNS]
 */
import pino from 'pino'
import { buildApp } from '../../src/app.ts'
import { SealedHistory } from '../../src/services/sealed/index.ts'
import { sealedProjectApp } from '../lib/sealed-project.ts'

const [dir, project, runsArg] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: live-computed.ts DIR PROJECT [RUNS]')
const runs = Number(runsArg ?? 9)
const { rt, clock, app, headers } = await sealedProjectApp(dir, project, 'live-computed')
const now = () => clock.toJSDate()
const logger = pino({ level: 'warn' })
const computing = new SealedHistory({ runner: rt.runner, logger, now, queryTimeoutS: 120, rebuildIntervalMs: 3_600_000, liveSnapshots: false })
const config = { ...rt.config, QUARRY_RATE_LIMIT: 1_000_000, QUARRY_QUERY_TIMEOUT_S: 120 }
const computed = buildApp({ config, runner: rt.runner, logger, signingKey: rt.signingKey, now, responseCache: false as const, metrics: false as const, sealed: computing })

const chart = `/export/charts?${new URLSearchParams({ projectId: project, range: '30d', interval: 'day', series: JSON.stringify([{ name: 'screen_view', segment: 'event' }]) })}`
const routes = ['metrics', 'pages', 'country', 'referrer', 'entry_page'].map((r) => `/insights/${project}/${r}?range=30d`).concat(chart)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const time = async (a: typeof app, path: string) => {
  const t0 = performance.now()
  const res = await a.request(`http://q.bench${path}`, { headers })
  const body = await res.text()
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`)
  return { ms: performance.now() - t0, body }
}
for (const path of routes) {
  const a: number[] = []
  const b: number[] = []
  let same = true
  for (let i = 0; i <= runs; i++) {
    const x = await time(app, path)
    const y = await time(computed, path)
    same &&= x.body === y.body
    if (i > 0) a.push(x.ms), b.push(y.ms)
  }
  console.log(`${path.split('?')[0]}: snapshot ${median(a).toFixed(1)} ms, computed ${median(b).toFixed(1)} ms, same body: ${same}`)
}
await rt.close()
