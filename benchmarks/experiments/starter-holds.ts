/**
 * What the request that starts a snapshot write costs the other requests: per round, an insert into
 * BIG (a copy of its last event under a new id, at its instant: C and the data's clock stay), then
 * BIG's ROUTE (the request that starts the part's write), while OTHER's breakdowns are asked one
 * after another until it is answered; per variant of the sealed history's `snapshotLongWriteMs`
 * (Infinity: the starter always computes its part, as before; the default: it waits for the write
 * when the part's previous write took that long; or the values given, in ms). Variants are apps over one runtime, each with its
 * own planner, interleaved round by round in alternating order, 2.2 s apart (the least time between
 * two snapshots of a part). Medians over the rounds, in ms.
 *
 *   npx tsx benchmarks/experiments/starter-holds.ts DIR BIG OTHER [ROUNDS] [ROUTE] [LONG_WRITE_MS,…]
 */
import { loadavg } from 'node:os'
import pino from 'pino'
import { buildApp } from '../../src/app.ts'
import { SealedHistory } from '../../src/services/sealed/index.ts'
import { insertCopyOfLastEvent, sealedProjectApp } from '../lib/sealed-project.ts'

const [dir, big, other, roundsArg, route = 'pages', longArg] = process.argv.slice(2)
if (!dir || !big || !other) throw new Error('usage: starter-holds.ts DIR BIG OTHER [ROUNDS] [ROUTE] [LONG_WRITE_MS,…]')
const rounds = Number(roundsArg ?? 5)
const { rt, headers, clock } = await sealedProjectApp(dir, big, 'starter-holds')
const logger = pino({ level: 'warn' })
const now = () => clock.toJSDate()
const config = { ...rt.config, QUARRY_RATE_LIMIT: 1_000_000, QUARRY_QUERY_TIMEOUT_S: 120 }
const longWrites = longArg ? longArg.split(',').map(Number) : [Infinity, undefined]
const variants = longWrites.map((longWriteMs) => {
  const sealed = new SealedHistory({ runner: rt.runner, logger, now, queryTimeoutS: 120, rebuildIntervalMs: 3_600_000, ...(longWriteMs !== undefined ? { snapshotLongWriteMs: longWriteMs } : {}) })
  const app = buildApp({ config, runner: rt.runner, logger, signingKey: rt.signingKey, now, responseCache: false as const, metrics: false as const, sealed })
  const name = longWriteMs === Infinity ? 'starter computes' : `starter waits after a write of ${longWriteMs ?? 'the default'} ms or more`
  return { name, sealed, app }
})
const bigPath = `/insights/${big}/${route}?range=30d`
const others = ['country', 'referrer_name', 'device', 'browser', 'os', 'city'].map((r) => `/insights/${other}/${r}?range=30d`)

async function request(app: (typeof variants)[number]['app'], path: string): Promise<number> {
  const t0 = performance.now()
  const res = await app.request(`http://q.bench${path}`, { headers })
  const body = await res.text()
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body}`)
  return performance.now() - t0
}
const insertOne = () => insertCopyOfLastEvent(rt.runner, big)
const settle = async () => {
  await Promise.all(variants.flatMap((v) => [v.sealed.snapshotsWritten(big), v.sealed.snapshotsWritten(other)]))
  await new Promise((r) => setTimeout(r, 2_200))
}

// Each variant's planner warm, and one write of BIG's parts timed by it (what the next round's starter judges by).
for (const v of variants) {
  for (const p of [bigPath, ...others]) await request(v.app, p)
  await settle()
  await insertOne()
  await request(v.app, bigPath)
  await settle()
}
const stats = new Map(variants.map((v) => [v.name, { starter: [] as number[], worst: [] as number[], median: [] as number[], asked: [] as number[] }]))
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
const loads: number[] = []
for (let round = 0; round < rounds; round++) {
  for (const v of round % 2 ? [...variants].reverse() : variants) {
    loads.push(loadavg()[0]!)
    const s = stats.get(v.name)!
    await insertOne()
    let done = false
    const starter = request(v.app, bigPath).finally(() => (done = true))
    const times: number[] = []
    for (let i = 0; !done; i++) times.push(await request(v.app, others[i % others.length]!))
    s.starter.push(await starter)
    s.worst.push(Math.max(...times))
    s.median.push(med(times))
    s.asked.push(times.length)
    await settle()
  }
}
console.log(`${big} ${route} starting the write, ${other}'s breakdowns meanwhile; medians of ${rounds} rounds, load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}\n`)
console.log(`| variant | ${big} ${route}, the starter | ${other}: slowest meanwhile | ${other}: median meanwhile | ${other}: answered meanwhile |\n|---|--:|--:|--:|--:|`)
for (const [name, s] of stats) {
  console.log(`| ${name} | ${med(s.starter).toFixed(0)} [${s.starter.map((x) => x.toFixed(0)).join(' ')}] | ${med(s.worst).toFixed(0)} [${s.worst.map((x) => x.toFixed(0)).join(' ')}] | ${med(s.median).toFixed(0)} | ${med(s.asked)} |`)
}
await rt.close()
