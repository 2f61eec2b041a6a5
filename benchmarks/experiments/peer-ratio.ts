/**
 * Issue 19's "against OpenPanel's SQL" row over the sealed history: each breakdown and /metrics as a
 * request to the app (in process, no response cache, the sealed history on the data's clock, its
 * planning reads included) beside OpenPanel's statements for the same window run bare on the engine
 * (lib/peer.ts: its best-case table, no HTTP, rows not parsed). Rounds alternate the order, so a slow
 * stretch of a shared machine lands on both sides alike; medians of wall time and of the process's CPU
 * (the embedded engine's threads included). The window is the 30 whole UTC days up to the data's
 * last day.
 *
 *   npx tsx benchmarks/experiments/peer-ratio.ts DATA_DIR PROJECT [RUNS]
 */
import { loadavg } from 'node:os'
import { DIMENSIONS } from '../../src/query/dimensions.ts'
import { runBare } from '../lib/bare.ts'
import { buildPeer, peerFor, type PeerStatement } from '../lib/peer.ts'
import { sealedProjectApp } from '../lib/sealed-project.ts'
import { quantile, round } from '../lib/stats.ts'

const [dir, project, runsArg = '9'] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: peer-ratio.ts DATA_DIR PROJECT [RUNS]')
const runs = Number(runsArg)
const { rt, clock, app, headers } = await sealedProjectApp(dir, project, 'peer-ratio')
const peerTable = await buildPeer(rt)
if (peerTable.built) console.log(`peer table built: ${peerTable.sessions} sessions in ${peerTable.seconds} s`)

const last = clock.toUTC().startOf('day')
const first = last.minus({ days: 29 })
const window = { startDate: first.toISODate()!, endDate: last.toISODate()! }
const peerWindow = { from: `${first.toISODate()} 00:00:00.000`, to: `${last.toISODate()} 23:59:59.999` }

interface Cell { route: string; url: string; peer: PeerStatement[] }
const cells: Cell[] = ['metrics', ...DIMENSIONS.map((d) => d.name)].flatMap((route) => {
  const peer = peerFor(route, project, peerWindow)
  return peer ? [{ route, url: `http://q/insights/${project}/${route}?${new URLSearchParams(window)}`, peer }] : []
})

const timed = async (work: () => Promise<unknown>) => {
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  await work()
  const c = process.cpuUsage(c0)
  return { ms: performance.now() - t0, cpu: (c.user + c.system) / 1000 }
}
const samples = new Map<string, { ms: number[]; cpu: number[] }>()
const keep = (key: string, s: { ms: number; cpu: number }) => {
  const got = samples.get(key) ?? { ms: [], cpu: [] }
  got.ms.push(s.ms)
  got.cpu.push(s.cpu)
  samples.set(key, got)
}
const loads: number[] = []
for (let i = 0; i <= runs; i++) {
  loads.push(loadavg()[0]!)
  for (const cell of i % 2 ? [...cells].reverse() : cells) {
    const sides = [
      ['quarry', async () => {
        const res = await app.request(cell.url, { headers })
        if (res.status !== 200 || !res.headers.has('x-quarry-sealed-until')) throw new Error(`${cell.url}: ${res.status}, not from the sealed history`)
        await res.arrayBuffer()
      }],
      ['peer', () => runBare(rt, cell.peer)],
    ] as const
    for (const [side, work] of i % 2 ? [...sides].reverse() : sides) {
      const s = await timed(work)
      // The first round writes the snapshots and warms the caches: not counted.
      if (i > 0) keep(`${cell.route}|${side}`, s)
    }
  }
}
const median = (xs: number[]) => quantile(xs, 0.5)
console.log(`${project}, ${window.startDate} – ${window.endDate} (UTC), clock ${clock.toISO()}, medians of ${runs} rounds, load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}\n`)
console.log('| route | Quarry ms (CPU) | peer ms (CPU) | peer / Quarry |\n|---|--:|--:|--:|')
for (const { route } of cells) {
  const q = samples.get(`${route}|quarry`)!
  const p = samples.get(`${route}|peer`)!
  console.log(`| ${route} | ${round(median(q.ms), 1)} (${round(median(q.cpu), 1)}) | ${round(median(p.ms), 1)} (${round(median(p.cpu), 1)}) | ${round(median(p.ms) / median(q.ms), 2)}× |`)
}
await rt.close()
