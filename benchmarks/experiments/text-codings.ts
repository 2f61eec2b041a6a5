/**
 * What each content coding of a streamed text export costs per block: the CSV blocks of a real
 * export (the first --blocks blocks of /export/events?format=csv over a data directory that
 * benchmarks/export-stream.ts seeded, read through the engine's stream in this process), each
 * compressed alone as src/http/content-coding.ts does, the codings interleaved over --rounds.
 * Prints the ratio (bytes in / bytes out) and MB/s of input per coding and level, the median round.
 *   npx tsx benchmarks/experiments/text-codings.ts --dir D [--blocks 40] [--rounds 5]
 */
import { compress as zstd } from '@mongodb-js/zstd'
import { Session } from 'chdb'
import { DateTime } from 'luxon'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { gzipSync } from 'node:zlib'
import { exportEventsStatement, resolveIncludes } from '../../src/query/export-events.ts'

const { values } = parseArgs({ options: { dir: { type: 'string' }, blocks: { type: 'string', default: '40' }, rounds: { type: 'string', default: '5' } } })
if (!values.dir) throw new Error('--dir: a data directory seeded by benchmarks/export-stream.ts')

const session = new Session(values.dir)
session.query('USE quarry')
const window = { from: DateTime.fromISO('2000-01-01T00:00:00Z'), to: DateTime.fromISO('2100-01-01T00:00:00Z'), timezone: 'UTC' }
const stmt = exportEventsStatement({ projectId: 'bench', window, events: [], filters: [], fields: resolveIncludes(undefined).fields, format: 'csv' })
const settings = Object.entries({ ...stmt.settings, max_execution_time: 600 })
  .map(([k, v]) => `${k} = ${typeof v === 'number' ? v : `'${v}'`}`)
  .join(', ')
const blocks: Buffer[] = []
for await (const chunk of session.queryStreamBind(`${stmt.sql} SETTINGS ${settings} FORMAT CSV`, stmt.params, {})) {
  blocks.push(Buffer.from(chunk.raw() as Uint8Array))
  if (blocks.length >= Number(values.blocks)) break
}
session.close()
const input = blocks.reduce((n, b) => n + b.byteLength, 0)

const CODINGS: Record<string, (b: Buffer) => Promise<Buffer> | Buffer> = {
  'gzip 1 (shipped)': (b) => gzipSync(b, { level: 1 }),
  'gzip 6': (b) => gzipSync(b, { level: 6 }),
  // @mongodb-js/zstd 1.2.2 compresses at its default level (3) whatever level it is given.
  'zstd 3 (shipped)': (b) => zstd(b),
}
const runs: Record<string, { ms: number; out: number }[]> = {}
for (let round = 0; round < Number(values.rounds); round++) {
  for (const [name, encode] of Object.entries(CODINGS)) {
    const started = performance.now()
    let out = 0
    for (const block of blocks) out += (await encode(block)).byteLength
    ;(runs[name] ??= []).push({ ms: performance.now() - started, out })
  }
}
console.log(`${blocks.length} CSV blocks, ${(input / 2 ** 20).toFixed(1)} MB; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
for (const [name, list] of Object.entries(runs)) {
  const median = [...list].sort((a, b) => a.ms - b.ms)[list.length >> 1]!
  console.log(`${name.padEnd(18)} ratio ${(input / median.out).toFixed(2)}x  ${(input / 2 ** 20 / (median.ms / 1000)).toFixed(0)} MB/s`)
}
