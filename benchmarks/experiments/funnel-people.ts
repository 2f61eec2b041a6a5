/**
 * Funnels by person (groupBy=profile_id) from the sealed history against the same funnels over the
 * events, in one process on one seeded project with a sealed build of this tree's format: per
 * cell, both statements run once per round in alternating order (engine time, medians), and their
 * rows compared.
 *   QUARRY_DATA_DIR=… npx tsx benchmarks/experiments/funnel-people.ts --project pl [--runs 9] [--only sealed]
 * --only sealed times the sealed statements alone (their rows still checked once against the events').
 */
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import type { Statement } from '../../src/clickhouse/run.ts'
import { loadConfig } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import { funnelStatement } from '../../src/query/product/funnel.ts'
import { sealedFunnel } from '../../src/query/product/sealed-units.ts'
import { productRange } from '../../src/query/product/window.ts'
import { readSealedLatest, sealedLatestStatement, type SealedLatestRow } from '../../src/query/sealed.ts'
import { openRuntime } from '../../src/runtime.ts'
import { round } from '../lib/stats.ts'
import { dataClock } from '../lib/data-clock.ts'

const { values } = parseArgs({ options: { project: { type: 'string', default: 'pl' }, runs: { type: 'string', default: '9' }, only: { type: 'string' } } })
const project = values.project!
const rt = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' as const, QUARRY_SEALED: false }, createLogger('warn'))
const now = (await dataClock(rt.runner, project)).clock.toJSDate()
const [row] = await rt.runner.rows<SealedLatestRow>(sealedLatestStatement([project]), { timeoutS: 60 })
const build = readSealedLatest(row)!.build
const range = productRange({ range: '30d' }, 'UTC', now, '30d')
const person = { projectId: project, range, filters: [], groupBy: 'profile_id' as const, windowHours: 24 }
const cells = [
  { name: 'funnel 3 steps, profile, 30d', steps: ['screen_view', 'add_to_cart', 'checkout'] },
  { name: 'funnel 5 steps, profile, 30d', steps: ['screen_view', 'search', 'add_to_cart', 'checkout', 'revenue'] },
]
const sealedOnly = values.only === 'sealed'
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const timed = async (s: Statement) => {
  const t = performance.now()
  const rows = await rt.runner.rows<{ level: number; units: number }>(s, { timeoutS: 120 })
  return { ms: performance.now() - t, rows: JSON.stringify(rows) }
}
for (const cell of cells) {
  const req = { ...person, steps: cell.steps }
  const statements = { sealed: sealedFunnel(req)!(build), events: funnelStatement(req) }
  const ms = { sealed: [] as number[], events: [] as number[] }
  const loads: number[] = []
  let same = true
  const reference = (await timed(statements.events)).rows
  for (let i = 0; i < Number(values.runs); i++) {
    const order = sealedOnly ? (['sealed'] as const) : i % 2 ? (['events', 'sealed'] as const) : (['sealed', 'events'] as const)
    for (const which of order) {
      const r = await timed(statements[which])
      ms[which].push(r.ms)
      same &&= r.rows === reference
    }
    loads.push(loadavg()[0]!)
  }
  console.log(JSON.stringify({ cell: cell.name, sealed_ms: round(median(ms.sealed), 0), events_ms: sealedOnly ? null : round(median(ms.events), 0), same_rows: same, rows: reference, load: round(median(loads), 2) }))
}
await rt.close()
