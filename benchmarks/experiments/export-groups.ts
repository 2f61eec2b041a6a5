/**
 * What `groups` on every exported event costs: the export statement of /export/events (default
 * fields) with and without the groups column, interleaved, over a project that `quarry seed`
 * fills in a temporary directory (about 30 % of its events carry one or two group ids). Rows/s of
 * the median round per variant, and the ratio within each round (the machine is shared: compare
 * ratios, not absolute figures).
 *   npx tsx benchmarks/experiments/export-groups.ts [--events 300000] [--rounds 5]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { DateTime } from 'luxon'
import { configSchema } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import { createProject } from '../../src/projects.ts'
import { exportEventsStatement, resolveIncludes } from '../../src/query/export-events.ts'
import { openRuntime } from '../../src/runtime.ts'
import { seedProject } from '../../src/seed/seed.ts'

const { values } = parseArgs({ options: { events: { type: 'string', default: '300000' }, rounds: { type: 'string', default: '5' } } })
const EVENTS = Number(values.events)
const ROUNDS = Number(values.rounds)

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-groups-'))
  const config = configSchema.parse({ LOG_LEVEL: 'silent', QUARRY_DEMO: '0', QUARRY_DATA_DIR: dir })
  const rt = await openRuntime(config, createLogger('silent'))
  try {
    await createProject(rt.runner, { id: 'bench', name: 'bench', timezone: 'UTC', organizationId: 'o' })
    await seedProject(rt.runner, { projectId: 'bench', events: EVENTS, days: 30, seed: 1, end: new Date('2026-03-01T00:00:00Z') })
    const window = { from: DateTime.fromISO('2000-01-01T00:00:00Z'), to: DateTime.fromISO('2100-01-01T00:00:00Z'), timezone: 'UTC' }
    const withGroups = resolveIncludes(undefined).fields
    const without = new Set([...withGroups].filter((f) => f !== 'groups'))
    const variants = (['ndjson', 'parquet'] as const).flatMap((format) => [
      { name: `${format} with groups`, format, fields: withGroups },
      { name: `${format} without groups`, format, fields: without },
    ])
    const times = new Map<string, number[]>(variants.map((v) => [v.name, []]))
    for (let round = 0; round < ROUNDS; round++) {
      for (const v of variants) {
        const statement = exportEventsStatement({ projectId: 'bench', window, events: [], filters: [], fields: v.fields, format: v.format })
        const started = performance.now()
        let bytes = 0
        for await (const chunk of rt.runner.stream(statement, v.format === 'ndjson' ? 'JSONEachRow' : 'Parquet', { timeoutS: 600 })) bytes += chunk.byteLength
        times.get(v.name)!.push((performance.now() - started) / 1000)
        if (bytes === 0) throw new Error(`${v.name}: nothing exported`)
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    console.log(`${EVENTS} events, ${ROUNDS} interleaved rounds, load ${loadavg().map((x) => x.toFixed(1)).join(' ')} (2 cores, shared)`)
    for (const v of variants) console.log(`${v.name}: ${Math.round(EVENTS / median(times.get(v.name)!)).toLocaleString('en-US')} rows/s (median)`)
    for (const format of ['ndjson', 'parquet']) {
      const ratios = times.get(`${format} with groups`)!.map((t, i) => t / times.get(`${format} without groups`)![i]!)
      console.log(`${format}: time with / without groups per round: ${ratios.map((r) => r.toFixed(2)).join(' ')} (median ${median(ratios).toFixed(2)})`)
    }
  } finally {
    await rt.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
void main()
