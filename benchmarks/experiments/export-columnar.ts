/**
 * What the columnar formats cost ClickHouse to write, by variant, interleaved: the export statement of
 * /export/events (default fields) over the first N events of a data directory that
 * benchmarks/export-stream.ts seeded (--keep or --dir), read through chDB's native stream in this
 * process and through the joiner, the bytes dropped. Rows/s per variant, the median of --rounds,
 * each round running every variant once (the machine is shared: compare ratios within a round).
 *   npx tsx benchmarks/experiments/export-columnar.ts --dir D [--rows 2000000] [--rounds 3] [--out <file name>]
 */
import { Session } from 'chdb'
import { writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { concatArrowStream } from '../../src/http/arrow-concat.ts'
import { concatParquet } from '../../src/http/parquet-concat.ts'
import { exportEventsStatement, resolveIncludes } from '../../src/query/export-events.ts'
import { DateTime } from 'luxon'

const { values } = parseArgs({
  options: { dir: { type: 'string' }, rows: { type: 'string', default: '2000000' }, rounds: { type: 'string', default: '3' }, out: { type: 'string' } },
})
if (!values.dir) throw new Error('--dir: a data directory seeded by benchmarks/export-stream.ts')
const ROWS = Number(values.rows)

interface Variant {
  name: string
  format: 'csv' | 'parquet' | 'arrow'
  settings: Record<string, string | number>
}
const VARIANTS: Variant[] = [
  { name: 'csv (8192-row blocks)', format: 'csv', settings: {} },
  { name: 'parquet zstd level 1, no dictionaries, blocks of up to 4 granules / 6 MB (shipped)', format: 'parquet', settings: {} },
  { name: 'parquet, blocks of one granule (before 27 Nov pm)', format: 'parquet', settings: { max_block_size: 8192, preferred_block_size_bytes: 1_000_000 } },
  { name: 'parquet zstd level 3, no dictionaries', format: 'parquet', settings: { output_format_compression_level: 3 } },
  { name: 'parquet zstd with dictionaries', format: 'parquet', settings: { output_format_parquet_max_dictionary_size: 1048576 } },
  { name: 'parquet snappy, no dictionaries', format: 'parquet', settings: { output_format_parquet_compression_method: 'snappy' } },
  {
    name: 'parquet snappy with dictionaries',
    format: 'parquet',
    settings: { output_format_parquet_compression_method: 'snappy', output_format_parquet_max_dictionary_size: 1048576 },
  },
  { name: 'parquet zstd, no page checksums', format: 'parquet', settings: { output_format_parquet_write_checksums: 0 } },
  { name: 'parquet zstd with bloom filters', format: 'parquet', settings: { output_format_parquet_write_bloom_filter: 1 } },
  { name: 'arrow, native writer (shipped)', format: 'arrow', settings: {} },
  { name: 'arrow, Arrow library writer', format: 'arrow', settings: { output_format_arrow_use_native_writer: 0 } },
  { name: 'arrow, blocks of up to 4 granules / 6 MB', format: 'arrow', settings: { max_block_size: 32768, preferred_block_size_bytes: 6_000_000 } },
  { name: 'arrow, no parallel encoding', format: 'arrow', settings: { output_format_arrow_parallel_encoding: 0 } },
]

const session = new Session(values.dir)
session.query('USE quarry')
const window = { from: DateTime.fromISO('2000-01-01T00:00:00Z'), to: DateTime.fromISO('2100-01-01T00:00:00Z'), timezone: 'UTC' }
const CLICKHOUSE = { csv: 'CSV', parquet: 'Parquet', arrow: 'ArrowStream' } as const

async function run(v: Variant): Promise<{ seconds: number; bytes: number; cpuUs: number }> {
  const base = exportEventsStatement({ projectId: 'bench', window, events: [], filters: [], fields: resolveIncludes(undefined).fields, format: v.format })
  const settings = { ...base.settings, ...v.settings, max_execution_time: 3600 }
  const list = Object.entries(settings).map(([k, x]) => `${k} = ${typeof x === 'number' ? x : `'${x}'`}`).join(', ')
  const sql = `SELECT * FROM (${base.sql}) LIMIT ${ROWS} SETTINGS ${list} FORMAT ${CLICKHOUSE[v.format]}`
  const started = performance.now()
  const cpu = process.cpuUsage()
  const raw = (async function* () {
    for await (const chunk of session.queryStreamBind(sql, base.params, {})) yield chunk.raw() as Uint8Array
  })()
  const joined = v.format === 'parquet' ? concatParquet(raw) : v.format === 'arrow' ? concatArrowStream(raw) : raw
  let bytes = 0
  for await (const part of joined) bytes += part.byteLength
  const used = process.cpuUsage(cpu)
  return { seconds: (performance.now() - started) / 1000, bytes, cpuUs: used.user + used.system }
}

const results: Record<string, number[]> = {}
const sizes: Record<string, number> = {}
// CPU time of this process (chDB's threads included) per row: the shared machine's load stretches
// wall time far more than it does this.
const cpuPerRow: Record<string, number[]> = {}
for (let round = 0; round < Number(values.rounds); round++) {
  for (const v of VARIANTS) {
    const r = await run(v)
    ;(results[v.name] ??= []).push(Math.round(ROWS / r.seconds))
    sizes[v.name] = r.bytes
    ;(cpuPerRow[v.name] ??= []).push(+(r.cpuUs / ROWS).toFixed(3))
    console.log(
      `round ${round + 1}: ${v.name}: ${Math.round(ROWS / r.seconds).toLocaleString()} rows/s, ${(r.cpuUs / ROWS).toFixed(2)} µs CPU/row, ${(r.bytes / 2 ** 20).toFixed(0)} MB`,
    )
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const csv = median(results[VARIANTS[0]!.name]!)
const report = {
  date: new Date().toISOString(),
  rows: ROWS,
  load_average: loadavg().map((l) => +l.toFixed(2)),
  note: 'In process through chDB and the joiners, no HTTP. Two cores shared with other engineers running tests: compare the ratios.',
  variants: VARIANTS.map((v) => ({
    variant: v.name,
    rows_per_s: results[v.name],
    median_rows_per_s: median(results[v.name]!),
    vs_csv: +(median(results[v.name]!) / csv).toFixed(2),
    cpu_us_per_row: cpuPerRow[v.name],
    median_cpu_us_per_row: median(cpuPerRow[v.name]!),
    mb: +(sizes[v.name]! / 2 ** 20).toFixed(1),
  })),
}
console.log(report.variants)
writeFileSync(new URL(`../results/${values.out ?? 'export-columnar-variants'}.json`, import.meta.url), `${JSON.stringify(report, null, 2)}\n`)
session.close()
