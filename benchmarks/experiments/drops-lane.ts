/**
 * What dropping a replaced build costs the requests: the project is built again, then its previous
 * build is dropped (27 `DROP PARTITION`s) while a request-sized read of the project (its country
 * breakdown over the sealed rollups) runs on the requests' line in a loop. Variants, interleaved:
 * `lane`, the drops in the builds' lane as `dropBuildsBefore` runs them; `line`, the same drops on
 * the requests' line (the runner with the lane taken out, as before the change). Prints the drops'
 * wall time and the reads' median and slowest while the drops ran, per round. Then the other read a
 * build makes on the line for its upkeep, which tables to compact: the catalogue's one read
 * (`tablesToCompact`) against the old one read per table counting `uniqExact(_part)`, medians of 8;
 * and, before each round's drops, the listing of the older builds: the catalogue's read
 * (sealed_versions.sql) against the old read of every sealed table's `version` column.
 *
 *   npx tsx benchmarks/experiments/drops-lane.ts DIR PROJECT [ROUNDS]
 */
import pino from 'pino'
import type { QueryRunner } from '../../src/clickhouse/run.ts'
import { loadConfig } from '../../src/config.ts'
import { newestClosing } from '../../src/query/sealed.ts'
import { openRuntime } from '../../src/runtime.ts'
import { renderSql } from '../../src/query/sql-templates.ts'
import { dropBuildsBefore, sealProject, tablesToCompact } from '../../src/services/sealed/builder.ts'
import { dataClock } from '../lib/data-clock.ts'
import { quantile, round } from '../lib/stats.ts'

const [dir, project, roundsArg] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: drops-lane.ts DIR PROJECT [ROUNDS]')
const rounds = Number(roundsArg ?? 3)
const logger = pino({ level: 'warn' })
const rt = await openRuntime(loadConfig({ ...process.env, QUARRY_DATA_DIR: dir, QUARRY_SEALED: '0' }), logger)
const { clock } = await dataClock(rt.runner, project)
const onLine: QueryRunner = { ...rt.runner, command: (stmt, opts) => rt.runner.command(stmt, { ...opts, background: undefined }) }
const read = {
  name: 'read',
  sql: `SELECT value, sum(sessions) FROM sealed_rollups WHERE project_id = {p:String} AND dimension = 'country' GROUP BY value`,
  params: { p: project },
}
const newest = async () => {
  const [row] = await rt.runner.rows<{ v: string }>(
    { name: 'newest', sql: 'SELECT toString(max(version)) AS v FROM sealed_builds WHERE project_id = {p:String}', params: { p: project } },
    { timeoutS: 60 },
  )
  return Number(row!.v)
}

const listings: { catalogue: number[]; rows: number[] } = { catalogue: [], rows: [] }
/** The older builds listed both ways, while one is there to find; both must find the same versions. */
async function timeListings(keep: number) {
  const tables = (await rt.runner.rows<{ name: string }>(
    { name: 'tables', sql: "SELECT DISTINCT table AS name FROM system.parts WHERE database = currentDatabase() AND active AND startsWith(table, 'sealed_') AND partition = toString(({p:String}, {v:UInt64}))", params: { p: project, v: keep } },
    { timeoutS: 60 },
  )).map((t) => t.name)
  const byRows = `SELECT DISTINCT version FROM (${tables.map((t) => `SELECT version FROM ${t} WHERE project_id = {project:String} AND version < {keep:UInt64}`).join(' UNION ALL ')})`
  const found: Record<string, string> = {}
  for (const [way, sql] of [['catalogue', renderSql('sealed_versions')], ['rows', byRows]] as const) {
    const t0 = performance.now()
    const versions = await rt.runner.rows<{ version: number }>({ name: `versions_${way}`, sql, params: { project, keep } }, { timeoutS: 60 })
    listings[way].push(performance.now() - t0)
    found[way] = JSON.stringify(versions.map((v) => v.version).sort())
  }
  if (found.catalogue !== found.rows) throw new Error(`the two listings differ: ${JSON.stringify(found)}`)
}

const results: Record<'lane' | 'line', { dropMs: number; p50: number; max: number; reads: number }[]> = { lane: [], line: [] }
for (let r = 0; r < rounds; r++) {
  for (const variant of r % 2 === 0 ? (['lane', 'line'] as const) : (['line', 'lane'] as const)) {
    await sealProject(project, { runner: rt.runner, logger, closedAt: newestClosing(clock), timeoutS: 900 })
    const keep = await newest()
    await timeListings(keep)
    const reads: number[] = []
    let dropping = true
    const started = performance.now()
    const drop = dropBuildsBefore(variant === 'lane' ? rt.runner : onLine, project, keep, 900).finally(() => (dropping = false))
    while (dropping) {
      const t0 = performance.now()
      await rt.runner.rows(read, { timeoutS: 60 })
      reads.push(performance.now() - t0)
    }
    await drop
    const dropMs = performance.now() - started
    results[variant].push({ dropMs: round(dropMs, 0), p50: round(quantile(reads, 0.5), 1), max: round(Math.max(...reads), 1), reads: reads.length })
    console.log(`round ${r + 1} ${variant}: drops ${round(dropMs, 0)} ms; reads meanwhile ${reads.length}, p50 ${round(quantile(reads, 0.5), 1)} ms, slowest ${round(Math.max(...reads), 1)} ms`)
  }
}
for (const variant of ['line', 'lane'] as const) {
  const rs = results[variant]
  const med = (k: 'dropMs' | 'p50' | 'max') => quantile(rs.map((x) => x[k]), 0.5)
  console.log(`${variant}: medians of ${rs.length}: drops ${med('dropMs')} ms, reads p50 ${med('p50')} ms, slowest ${med('max')} ms`)
}
console.log(`older builds listed (${listings.rows.length} times): the catalogue ${round(quantile(listings.catalogue, 0.5), 1)} ms; every sealed table's version column ${round(quantile(listings.rows, 0.5), 1)} ms`)

const version = await newest()
const tables = (await rt.runner.rows<{ name: string }>(
  { name: 'tables', sql: "SELECT DISTINCT table AS name FROM system.parts WHERE database = currentDatabase() AND active AND partition = toString(({p:String}, {v:UInt64})) AND table NOT LIKE 'sealed\\_live%' AND table NOT IN ('sealed_builds', 'sealed_active_users')", params: { p: project, v: version } },
  { timeoutS: 60 },
)).map((r) => r.name)
const catalogue: number[] = []
const perTable: number[] = []
for (let r = 0; r < 8; r++) {
  let t0 = performance.now()
  await tablesToCompact(rt.runner, project, version, 60)
  catalogue.push(performance.now() - t0)
  t0 = performance.now()
  for (const table of tables) {
    await rt.runner.rows({ name: 'parts', sql: `SELECT uniqExact(_part) AS parts FROM ${table} WHERE project_id = {p:String} AND version = {v:UInt64}`, params: { p: project, v: version } }, { timeoutS: 60 })
  }
  perTable.push(performance.now() - t0)
}
console.log(`which tables to compact (${tables.length} tables): one catalogue read ${round(quantile(catalogue, 0.5), 1)} ms; one uniqExact(_part) read per table ${round(quantile(perTable, 0.5), 0)} ms`)
await rt.close()
