/**
 * Which statements each M route runs per request, and each one's wall ms: warm (the planner's
 * facts known), and for the first request after a small insert after C (a copy of the project's
 * last event under a new id, at the same instant, so the data's clock and C stay as they were).
 *
 *   npx tsx benchmarks/experiments/route-statements.ts DIR PROJECT [WARM_RUNS]
 *
 * Statements are timed by wrapping the runtime's runner, in the process the app runs in.
 */
import type { CommandOptions, QueryRunner, RunOptions, Statement } from '../../src/clickhouse/run.ts'
import { insertCopyOfLastEvent, sealedProjectApp } from '../lib/sealed-project.ts'

const [dir, project, warmArg] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: route-statements.ts DIR PROJECT [WARM_RUNS]')
const warmRuns = Number(warmArg ?? 7)

// LIVE_SNAPSHOTS=0: every request computes what comes after C (the path a request takes while a snapshot is missing).
const { rt, app, headers, sealed } = await sealedProjectApp(dir, project, 'route-statements', { liveSnapshots: process.env.LIVE_SNAPSHOTS !== '0' })
let log: { name: string; ms: number }[] = []
const runner = rt.runner as QueryRunner
for (const method of ['rows', 'command'] as const) {
  const original = (runner[method] as (...a: unknown[]) => Promise<unknown>).bind(runner)
  ;(runner as unknown as Record<string, unknown>)[method] = async (stmt: Statement, opts?: RunOptions & CommandOptions) => {
    const t0 = performance.now()
    const into = log
    try {
      return await original(stmt, opts)
    } finally {
      // A background write is listed with the request that started it, however long it outlives it.
      into.push({ name: `${stmt.name}${opts?.background ? ' (background)' : ''}`, ms: performance.now() - t0 })
    }
  }
}

const chart = `/export/charts?${new URLSearchParams({ projectId: project, range: '30d', interval: 'day', series: JSON.stringify([{ name: 'screen_view', segment: 'event' }]) })}`
const routes: [string, string][] = [
  ['metrics', `/insights/${project}/metrics?range=30d`],
  ['pages', `/insights/${project}/pages?range=30d`],
  ['country', `/insights/${project}/country?range=30d`],
  ['referrer', `/insights/${project}/referrer?range=30d`],
  ['entry_page', `/insights/${project}/entry_page?range=30d`],
  ['charts', chart],
]

async function request(path: string): Promise<{ ms: number; statements: { name: string; ms: number }[] }> {
  log = []
  const t0 = performance.now()
  const res = await app.request(`http://q.bench${path}`, { headers })
  await res.text()
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`)
  return { ms: performance.now() - t0, statements: log }
}

const show = (s: { name: string; ms: number }[]) => s.map((x) => `${x.name} ${x.ms.toFixed(1)}`).join(', ')
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const insertOne = () => insertCopyOfLastEvent(rt.runner, project)

for (const [name, path] of routes) {
  for (let i = 0; i < 3; i++) await request(path)
  const warm: number[] = []
  let last: Awaited<ReturnType<typeof request>> | undefined
  for (let i = 0; i < warmRuns; i++) {
    last = await request(path)
    warm.push(last.ms)
  }
  console.log(`${name} warm: median ${median(warm).toFixed(1)} ms; last: ${show(last!.statements)}`)
  await new Promise((r) => setTimeout(r, 2_100))
  await insertOne()
  const first = await request(path)
  const firstMs = first.ms
  await sealed.snapshotsWritten(project)
  console.log(`${name} first after an insert: ${firstMs.toFixed(1)} ms: ${show(first.statements)}`)
  const second = await request(path)
  console.log(`${name} second: ${second.ms.toFixed(1)} ms: ${show(second.statements)}`)
}
await rt.close()
