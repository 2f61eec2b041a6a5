/**
 * Where the product routes' time goes on a seeded project: each statement beside the parts it is
 * made of (the scan alone, the grouping per unit, the person links), medians of --runs runs in
 * process on the engine's client (no HTTP, no gate). Same clock and windows as product-latency.ts.
 *   QUARRY_DATA_DIR=… npx tsx benchmarks/product-profile.ts --project pl [--runs 3] [--only sealed]
 * --only keeps the statements whose name contains it (--only sealed_build: the build's steps alone).
 */
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import type { Statement } from '../src/clickhouse/run.ts'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/log.ts'
import { activeUsersStatement, sealedActiveUsers } from '../src/query/product/active-users.ts'
import { funnelStatement } from '../src/query/product/funnel.ts'
import { cohortColumns, defaultCohortRange } from '../src/query/product/retention.ts'
import { sealedCohort, sealedEngagement, sealedRetention } from '../src/query/product/sealed-product.ts'
import { flowStatement } from '../src/query/product/user-flow.ts'
import { allTime, productRange } from '../src/query/product/window.ts'
import { readSealedLatest, sealedLatestStatement, type SealedLatestRow } from '../src/query/sealed.ts'
import { renderSql } from '../src/query/sql-templates.ts'
import { clickhouseInstant } from '../src/query/time-range.ts'
import { openRuntime } from '../src/runtime.ts'
import { round } from './lib/stats.ts'
import { dataClock } from './lib/data-clock.ts'

const { values } = parseArgs({ options: { project: { type: 'string', default: 'pl' }, runs: { type: 'string', default: '3' }, only: { type: 'string' } } })
const project = values.project!
const rt = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' as const, QUARRY_SEALED: false }, createLogger('warn'))
const now = (await dataClock(rt.runner, project)).clock.toJSDate()
const [row] = await rt.runner.rows<SealedLatestRow>(sealedLatestStatement([project]), { timeoutS: 60 })
const build = readSealedLatest(row)?.build
const range = productRange({ range: '30d' }, 'UTC', now, '30d')
const window = { project, from: clickhouseInstant(range.start), to: clickhouseInstant(range.end) }
const where = "project_id = {project:String} AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}"
const steps = ['screen_view', 'add_to_cart', 'checkout']
const part = (name: string, sql: string, params: Record<string, unknown> = window): Statement => ({ name, sql, params })

const unit = { projectId: project, range, filters: [], groupBy: 'session_id' as const }
const parts: Statement[] = [
  part('scan: events of the 3 steps, 30d', `SELECT count() FROM events WHERE ${where} AND name IN {steps:Array(String)}`, { ...window, steps }),
  part('group: those events per session', `SELECT count() FROM (SELECT session_id, count() FROM events WHERE ${where} AND name IN {steps:Array(String)} GROUP BY session_id)`, { ...window, steps }),
  funnelStatement({ ...unit, steps, windowHours: 24 }),
  part('links: device -> person, 30d', `SELECT count() FROM (SELECT device_id, argMin(profile_id, created_at) FROM events WHERE ${where} AND profile_id != device_id AND profile_id != '' GROUP BY device_id)`),
  { ...funnelStatement({ ...unit, groupBy: 'profile_id', steps, windowHours: 24 }), name: 'insights_funnel (profile)' },
  part('group: every event per session as (time, name), 30d', `SELECT count() FROM (SELECT session_id, groupArray((created_at, name)) FROM events WHERE ${where} GROUP BY session_id)`),
  flowStatement({ ...unit, startEvent: 'screen_view', mode: 'after', steps: 5, include: [], exclude: [] }),
  { ...activeUsersStatement({ projectId: project, range: allTime(now, 'UTC'), days: 30, allTime: true }), name: 'insights_active_users (all time, events)' },
]
if (build) {
  const at = (r: typeof range, allTimeWindow: boolean, label: string) => ({ ...sealedActiveUsers({ projectId: project, range: r, days: 30, allTime: allTimeWindow })!(build), name: label })
  // The same windows ending at C: the sealed rollups alone, without the events after C.
  const toC = (r: typeof range) => ({ ...r, end: build.closedAt })
  const whole = { projectId: project, range: allTime(now, 'UTC'), filters: [] }
  const cohortRange = defaultCohortRange(now, 'UTC')
  parts.push(
    at(allTime(now, 'UTC'), true, 'insights_active_users_sealed (all time)'),
    at(range, false, 'insights_active_users_sealed (30d)'),
    at(toC(range), false, 'insights_active_users_sealed (30d to C: no events after C)'),
    sealedRetention(whole)!(build),
    { ...sealedRetention({ ...whole, range: toC(whole.range) })!(build), name: 'insights_retention_sealed (to C)' },
    sealedCohort({ ...whole, range: cohortRange }, cohortColumns(cohortRange), now)!(build),
    sealedEngagement(project, 'UTC', now)!(build),
  )
}

const runs = Number(values.runs)
console.log(`load ${loadavg().map((l) => round(l, 2)).join(' ')}`)
// Round by round, every statement once per round: a loaded machine weighs on all of them alike.
const chosen = parts.filter((p) => values.only === undefined || p.name.includes(values.only))
const times = chosen.map(() => [] as number[])
for (let i = 0; i < runs; i++) {
  for (const [k, statement] of chosen.entries()) {
    const started = performance.now()
    try {
      await rt.runner.rows(statement, { timeoutS: 30 })
      times[k]!.push(performance.now() - started)
    } catch (err) {
      times[k]!.push(Infinity)
      console.log(`${statement.name}: ${String(err).slice(0, 120)}`)
    }
  }
}
for (const [k, statement] of chosen.entries()) {
  const sorted = times[k]!.sort((a, b) => a - b)
  console.log(`${statement.name}: median ${round(sorted[Math.floor(sorted.length / 2)]!, 0)} ms (${sorted.map((t) => round(t, 0)).join(', ')})`)
}
// What migration 022 adds to a build: the profile rollups of the whole history (hours, then whole
// UTC days), written under a scratch version and dropped again.
if (build && (values.only === undefined || values.only.startsWith('sealed_build'))) {
  const scratch = { project, version: 1, closed: clickhouseInstant(build.closedAt) }
  for (const step of ['sealed_build_profiles', 'sealed_build_profile_days']) {
    const started = performance.now()
    await rt.runner.command({ name: step, sql: renderSql(step), params: scratch })
    console.log(`${step} (whole history): ${round(performance.now() - started, 0)} ms`)
  }
  const [size] = await rt.runner.rows<{ rows: number; bytes: number }>(
    { name: 'size', sql: "SELECT sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts WHERE active AND table = 'sealed_profile_rollups' AND partition = {part:String}", params: { part: `('${project}',1)` } },
    { timeoutS: 60 },
  )
  await rt.runner.command({ name: 'versioned_drop', sql: renderSql('versioned_drop', { table: 'sealed_profile_rollups' }), params: { project, version: 1 } })
  console.log(`sealed_profile_rollups of the whole history: ${size?.rows ?? '?'} rows, ${round((size?.bytes ?? 0) / 2 ** 20, 1)} MB`)
}
console.log(`load ${loadavg().map((l) => round(l, 2)).join(' ')}`)
await rt.close()
