/**
 * What the first request after an insert pays for the snapshots of the events after C: each part's
 * write (the live sessions, the numbered events after C, /pages' part, the numbered profiles),
 * interleaved, medians of N. Before the parts were written one at a time, a breakdown's first
 * request wrote them all; now it writes the live sessions only, /metrics those and the events,
 * charts the events, /pages its own part, the product routes over profiles theirs.
 *
 *   npx tsx benchmarks/experiments/snapshot-parts.ts DATA_DIR PROJECT [RUNS]
 */
import { randomInt } from 'node:crypto'
import { loadavg } from 'node:os'
import { sealedLiveProfilesWriteStatement } from '../../src/query/product/sealed-product.ts'
import { sealedLiveEventsWriteStatement, sealedLiveWriteStatement } from '../../src/query/sealed-live.ts'
import { sealedLivePagesWriteStatement } from '../../src/query/sealed-pages.ts'
import { openSealedProject } from '../lib/sealed-project.ts'

const [dir, project, runsArg = '9'] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: snapshot-parts.ts DATA_DIR PROJECT [RUNS]')
const runs = Number(runsArg)
const { rt, computed: build } = await openSealedProject(dir, project, true)
const parts = {
  sessions: sealedLiveWriteStatement,
  events: sealedLiveEventsWriteStatement,
  pages: sealedLivePagesWriteStatement,
  profiles: sealedLiveProfilesWriteStatement,
}
const names = Object.keys(parts) as (keyof typeof parts)[]
const times = new Map(names.map((n) => [n, [] as number[]]))
const load = loadavg()[0]!
for (let i = 0; i < runs + 1; i++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(i + k) % names.length]!
    const write = parts[name](project, build, randomInt(1, 2 ** 48))
    const t = performance.now()
    await rt.runner.command({ ...write, sql: `${write.sql}\nSETTINGS max_execution_time = 600` })
    if (i >= 1) times.get(name)!.push(performance.now() - t)
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(`${project}, C ${build.closedAt.toISO()}, medians of ${runs}, interleaved, load ${load.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}\n`)
console.log('| snapshot write | ms |\n|---|--:|')
for (const name of names) console.log(`| ${name} | ${median(times.get(name)!).toFixed(1)} |`)
console.log(`| all (what every first request paid before) | ${names.reduce((s, n) => s + median(times.get(n)!), 0).toFixed(1)} |`)
await rt.close()
