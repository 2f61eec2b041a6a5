/**
 * Where a columnar export's time goes before HTTP: the default-fields statement of /export/events
 * over a whole project, run through chDB's native stream in this process with the bytes dropped,
 * as the ordered read alone (FORMAT Null), the same columns unordered, and each output format with
 * and without the order, interleaved over --rounds. Prints rows/s per variant (the median round).
 * Run it on a directory whose parts have merged (OPTIMIZE … FINAL first for the settled case).
 *   npx tsx benchmarks/experiments/export-read.ts --dir D [--project bench] [--rounds 3]
 */
import { Session } from 'chdb'
import { DateTime } from 'luxon'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { exportEventsStatement, resolveIncludes } from '../../src/query/export-events.ts'
import { EXPORT_FORMATS } from '../../src/query/export-formats.ts'

const { values } = parseArgs({ options: { dir: { type: 'string' }, project: { type: 'string', default: 'bench' }, rounds: { type: 'string', default: '3' } } })
if (!values.dir) throw new Error('--dir: a data directory seeded by benchmarks/export-stream.ts')

const session = new Session(values.dir)
session.query('USE quarry')
const window = { from: DateTime.fromISO('2000-01-01T00:00:00Z'), to: DateTime.fromISO('2100-01-01T00:00:00Z'), timezone: 'UTC' }
const statement = (format: 'csv' | 'parquet' | 'arrow') =>
  exportEventsStatement({ projectId: values.project!, window, events: [], filters: [], fields: resolveIncludes(undefined).fields, format })
const [{ n: rows }] = JSON.parse(String(session.query(`SELECT count() AS n FROM events WHERE project_id = '${values.project}' FORMAT JSON`))).data as [{ n: number }]

/** The export's own statement, or its selected rows unordered (the ORDER BY of `selected` dropped). */
const unordered = (sql: string) => sql.replace(/ORDER BY toDate\(created_at\) DESC, created_at DESC, id ASC/, '')
interface Variant {
  name: string
  format: 'csv' | 'parquet' | 'arrow'
  output: string
  order: boolean
  settings?: Record<string, string | number>
}
const DICTIONARIES = { output_format_arrow_low_cardinality_as_dictionary: 1 }
const VARIANTS: Variant[] = [
  { name: 'read only (Null), ordered', format: 'csv', output: 'Null', order: true },
  { name: 'read only (Null), unordered', format: 'csv', output: 'Null', order: false },
  { name: 'Native, unordered', format: 'csv', output: 'Native', order: false },
  { name: 'CSV, ordered (shipped)', format: 'csv', output: 'CSV', order: true },
  { name: 'Arrow, ordered (shipped)', format: 'arrow', output: 'ArrowStream', order: true },
  { name: 'Arrow, unordered', format: 'arrow', output: 'ArrowStream', order: false },
  { name: 'Arrow, dictionaries, ordered', format: 'arrow', output: 'ArrowStream', order: true, settings: DICTIONARIES },
  { name: 'Arrow, dictionaries, unordered', format: 'arrow', output: 'ArrowStream', order: false, settings: DICTIONARIES },
  { name: 'Parquet zstd, ordered (shipped)', format: 'parquet', output: 'Parquet', order: true },
  { name: 'Parquet uncompressed, ordered', format: 'parquet', output: 'Parquet', order: true, settings: { output_format_parquet_compression_method: 'none' } },
]

async function run(v: Variant): Promise<number> {
  const base = statement(v.format)
  const settings = Object.entries({ ...base.settings, ...EXPORT_FORMATS[v.format].settings, ...v.settings, max_execution_time: 3600 })
    .map(([k, x]) => `${k} = ${typeof x === 'number' ? x : `'${x}'`}`)
    .join(', ')
  const sql = `${v.order ? base.sql : unordered(base.sql)} SETTINGS ${settings} FORMAT ${v.output}`
  const started = performance.now()
  for await (const chunk of session.queryStreamBind(sql, base.params, {})) void chunk.raw()
  return rows / ((performance.now() - started) / 1000)
}

const rates = new Map<string, number[]>()
for (let round = 0; round < Number(values.rounds); round++) {
  for (const v of VARIANTS) rates.set(v.name, [...(rates.get(v.name) ?? []), await run(v)])
}
session.close()
console.log(`${rows.toLocaleString()} events, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
for (const [name, list] of rates) {
  const median = [...list].sort((a, b) => a - b)[list.length >> 1]!
  console.log(`${name.padEnd(34)} ${(median / 1e6).toFixed(2)}M rows/s`)
}
