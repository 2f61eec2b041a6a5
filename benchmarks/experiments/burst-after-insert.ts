/**
 * A burst right after a small insert after C: N concurrent requests (a mix of /metrics, /pages and
 * breakdowns) after an insert (a copy of the project's last event under a new id, at its instant: C
 * and the data's clock stay), per variant of the sealed history's `snapshotWaitMs`; and the lone
 * first request after an insert (/metrics), per variant. The variants are apps over one runtime,
 * each with its own planner, interleaved round by round in alternating order; 2.2 s between rounds
 * (the least time between two snapshots of a part) so that each starts settled. Also counts the
 * statements each burst ran, by name, and their wall times summed (the requests' line only; a statement's
 * time includes its wait in chDB's queue behind the others, so this sum is not CPU).
 *
 * A request refused 503 by the gate is counted and its time kept (QUARRY_MAX_QUEUE_WAIT_MS in the
 * environment sets the gate's bound).
 *
 *   npx tsx benchmarks/experiments/burst-after-insert.ts DIR PROJECT [ROUNDS] [N] [unshared|WAIT_MS,…]
 */
import type { CommandOptions, QueryRunner, RunOptions, Statement } from '../../src/clickhouse/run.ts'
import { insertCopyOfLastEvent, sealedApp, sealedProjectApp } from '../lib/sealed-project.ts'

const [dir, project, roundsArg, nArg, waitsArg] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: burst-after-insert.ts DIR PROJECT [ROUNDS] [N] [WAIT_MS,…]')
const rounds = Number(roundsArg ?? 7)
const n = Number(nArg ?? 20)
const waits = (waitsArg ?? 'unshared,0,300').split(',')
const opened = await sealedProjectApp(dir, project, 'burst-after-insert')
const { rt, headers } = opened

let counts = new Map<string, number>()
let engineMs = 0
const runner = rt.runner as QueryRunner
for (const method of ['rows', 'command'] as const) {
  const original = (runner[method] as (...a: unknown[]) => Promise<unknown>).bind(runner)
  ;(runner as unknown as Record<string, unknown>)[method] = (stmt: Statement, opts?: RunOptions & CommandOptions) => {
    counts.set(stmt.name, (counts.get(stmt.name) ?? 0) + 1)
    const t0 = performance.now()
    // Background writes run beside the requests' line: only the line's statements are summed.
    return original(stmt, opts).finally(() => {
      if (!opts?.background) engineMs += performance.now() - t0
    })
  }
}

const variants = waits.map((wait) => {
  const { app, sealed } = sealedApp(opened, { snapshotWaitMs: Number(wait) || 0 })
  if (wait === 'unshared') {
    type Read = (own: RunOptions) => Promise<unknown>
    const planner = (sealed as unknown as { planner: { shared: unknown } }).planner
    planner.shared = { run: (_key: string, run: RunOptions, read: Read) => read({ timeoutS: run.timeoutS, signal: run.signal, stats: run.stats }) }
  }
  return { wait, sealed, app }
})

const mix = ['metrics', 'pages', 'country', 'referrer', 'entry_page', 'device', 'browser', 'os'].map((r) => `/insights/${project}/${r}?range=30d`)
let refused = 0
const burstPaths = Array.from({ length: n }, (_, i) => mix[i % mix.length]!)

async function request(app: (typeof variants)[number]['app'], path: string): Promise<number> {
  const t0 = performance.now()
  const res = await app.request(`http://q.bench${path}`, { headers })
  const body = await res.text()
  if (res.status !== 200) {
    if (res.status !== 503) throw new Error(`${path}: ${res.status} ${body}`)
    refused += 1
  }
  return performance.now() - t0
}
const insertOne = () => insertCopyOfLastEvent(rt.runner, project)
const settle = async () => {
  await Promise.all(variants.map((v) => v.sealed.snapshotsWritten(project)))
  await new Promise((r) => setTimeout(r, 2_200))
}

// Warm every variant's planner and snapshots first.
for (const v of variants) for (const p of mix) await request(v.app, p)
await settle()

const stats = new Map(variants.map((v) => [v.wait, { refused: 0, engine: [] as number[], p50: [] as number[], p99: [] as number[], total: [] as number[], lone: [] as number[], statements: new Map<string, number>() }]))
const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? variants : [...variants].reverse()
  for (const v of order) {
    const s = stats.get(v.wait)!
    await insertOne()
    counts = new Map()
    refused = 0
    engineMs = 0
    const t0 = performance.now()
    const ms = await Promise.all(burstPaths.map((p) => request(v.app, p)))
    s.total.push(performance.now() - t0)
    s.p50.push(pct(ms, 0.5))
    s.p99.push(pct(ms, 0.99))
    s.refused += refused
    s.engine.push(engineMs)
    await v.sealed.snapshotsWritten(project)
    for (const [name, c] of counts) s.statements.set(name, (s.statements.get(name) ?? 0) + c)
    await settle()
    await insertOne()
    s.lone.push(await request(v.app, mix[0]!))
    await settle()
  }
}
// The same bodies from every variant, settled.
for (const p of mix) {
  const texts = await Promise.all(variants.map(async (v) => (await v.app.request(`http://q.bench${p}`, { headers })).text()))
  if (new Set(texts).size !== 1) console.log(`DIFFERENT BODIES for ${p}`)
}
const med = (xs: number[]) => pct(xs, 0.5).toFixed(0)
for (const [wait, s] of stats) {
  console.log(`${wait}: burst of ${n}: p50 ${med(s.p50)} p99 ${med(s.p99)} total ${med(s.total)} ms, statements' wall summed ${med(s.engine)} ms (medians of ${rounds}; ${s.refused} answers of 503 overloaded in all; totals ${s.total.map((x) => x.toFixed(0)).join(' ')}); lone /metrics first after insert ${med(s.lone)} [${s.lone.map((x) => x.toFixed(0)).join(' ')}]`)
  console.log(`  statements per burst: ${[...s.statements].map(([k, c]) => `${k} ${(c / rounds).toFixed(1)}`).join(', ')}`)
}
await rt.close()
