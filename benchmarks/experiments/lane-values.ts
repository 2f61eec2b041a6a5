/**
 * What a read lane's file of values costs one statement (src/clickhouse/engine/read-lanes.ts), at
 * concurrency 1 on one chDB session, interleaved: a statement dumped by `statements.ts dump` run
 *
 *   line     with chDB's parameter binding, as the line runs it
 *   lane     as a lane runs it: its values in a file read by one scalar subquery
 *   scalar   the same values as literals in one scalar subquery without a table
 *   literal  the same values as a literal tuple, no subquery
 *
 * `scalar` and `literal` splice the values into the SQL text: they exist here only to tell what the
 * lane's cost is made of, never in Quarry. Prints the median and least wall ms of each and a hash of
 * its rows (all four must return the same rows).
 *
 *   npx tsx benchmarks/experiments/lane-values.ts DIR STATEMENT [RUNS]
 *   (STATEMENT: the OUT of `statements.ts dump`, its .sql and .json)
 */
import { createHash } from 'node:crypto'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Session } from 'chdb'
import { laneStatement } from '../../src/clickhouse/engine/read-lanes.ts'
import { finalSql } from '../../src/clickhouse/run.ts'
import { quoted } from '../../src/clickhouse/sql-text.ts'
import { quantile } from '../lib/stats.ts'

const [dir, statement, runsArg = '31'] = process.argv.slice(2)
if (!dir || !statement) throw new Error('usage: lane-values.ts DIR STATEMENT [RUNS]')
const sql = finalSql({ name: 'lane_values', sql: readFileSync(`${statement}.sql`, 'utf8'), params: {} }, { timeoutS: 60 }, 'JSONEachRow')
const params = JSON.parse(readFileSync(`${statement}.json`, 'utf8')) as Record<string, unknown>
const file = join(tmpdir(), `lane-values-${process.pid}.jsonl`)
const lane = laneStatement(sql, params, file)
if (!lane?.row) throw new Error('the statement has no values a lane carries')
const head = lane.sql.slice(0, lane.sql.indexOf(' AS quarry_values') + ' AS quarry_values'.length)
const literal = (v: unknown): string => (Array.isArray(v) ? `[${v.map(literal).join(', ')}]` : typeof v === 'string' ? quoted(v) : String(v))
const tuple = `tuple(${Object.values(JSON.parse(lane.row) as Record<string, unknown>).map(literal).join(', ')})`
const withValues = (values: string) => `WITH ${values} AS quarry_values${lane.sql.slice(head.length)}`

const session = new Session(dir)
session.query('USE quarry')
const variants: Record<string, () => Promise<string>> = {
  line: async () => (await session.queryBindAsync(sql, params)).text(),
  lane: async () => {
    writeFileSync(file, `${lane.row}\n`)
    return (await session.queryAsync(lane.sql)).text()
  },
  scalar: async () => (await session.queryAsync(withValues(`(SELECT ${tuple})`))).text(),
  literal: async () => (await session.queryAsync(withValues(tuple))).text(),
}
const times: Record<string, number[]> = {}
const hashes: Record<string, string> = {}
for (let round = 0; round <= Number(runsArg); round++) {
  for (const [name, run] of Object.entries(variants)) {
    const t0 = performance.now()
    const text = await run()
    const ms = performance.now() - t0
    if (round === 0) hashes[name] = `${createHash('sha256').update(text).digest('hex').slice(0, 10)} ${text.length}`
    else (times[name] ??= []).push(ms)
  }
}
rmSync(file, { force: true })
for (const name of Object.keys(variants)) {
  console.log(`${name.padEnd(8)} median ${quantile(times[name]!, 0.5).toFixed(1)} ms, least ${Math.min(...times[name]!).toFixed(1)} | ${hashes[name]}`)
}
