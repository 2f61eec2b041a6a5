import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { tableFromIPC } from 'apache-arrow'
import { Session } from 'chdb'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { concatArrowStream } from '../src/http/arrow-concat.ts'
import { concatParquet } from '../src/http/parquet-concat.ts'
import { seededRandom } from './helpers/random.ts'
import { readParquet } from './support/columnar-readers.ts'

// Joining what the engines write into one file. chDB (embedded) formats each streamed block as a
// file or stream of its own; a ClickHouse server (HTTP engine) writes one file cut into arbitrary
// chunks. Both must come out as one valid file: read back by DuckDB and apache-arrow.

let dir: string
let session: Session

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-concat-'))
  session = new Session(dir)
})

afterAll(() => {
  session?.close()
  rmSync(dir, { recursive: true, force: true })
})

const ROWS = 30_000
const SQL = `SELECT number AS n, toDateTime64(number, 3, 'UTC') AS date, map('k', toString(number % 7)) AS m,
  if(number % 3 = 0, NULL, toFloat32(number / 4)) AS x, repeat('s', number % 5) AS s FROM numbers(${ROWS})`
const SETTINGS = `max_block_size = 4096, output_format_parquet_write_page_index = 0, output_format_arrow_compression_method = 'none',
  output_format_parquet_string_as_string = 1, output_format_arrow_string_as_string = 1`

/** chDB's streamed chunks: one whole file or stream per block. */
async function blocks(format: 'Parquet' | 'ArrowStream', sql = SQL): Promise<Uint8Array[]> {
  const out: Uint8Array[] = []
  for await (const chunk of session.queryStreamBind(`${sql} SETTINGS ${SETTINGS} FORMAT ${format}`, {}, {})) out.push(Uint8Array.from(chunk.raw()))
  return out
}

async function collect(source: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = []
  for await (const p of source) parts.push(p)
  return Buffer.concat(parts)
}

async function* from(chunks: Uint8Array[]) {
  yield* chunks
}

/** `bytes` cut at random places, as a socket delivers a server's single file. */
function cut(bytes: Uint8Array, seed: number): Uint8Array[] {
  const rnd = seededRandom(seed)
  const out: Uint8Array[] = []
  for (let at = 0; at < bytes.length; ) {
    const n = 1 + Math.floor(rnd() * (rnd() < 0.2 ? 8 : 70_000))
    out.push(bytes.subarray(at, at + n))
    at += n
  }
  return out
}

const expectedRow = (n: number) => ({
  n,
  date: new Date(n * 1000).toISOString(),
  m: { k: String(n % 7) },
  x: n % 3 === 0 ? null : Math.fround(n / 4),
  s: 's'.repeat(n % 5),
})
const ALL = Array.from({ length: ROWS }, (_, n) => expectedRow(n))

describe('Parquet', () => {
  it('per-block files (chDB) become one file with a row group per block', async () => {
    const chunks = await blocks('Parquet')
    expect(chunks.length).toBeGreaterThan(3)
    const joined = await collect(concatParquet(from(chunks)))
    const read = await readParquet(joined)
    expect(read.rows).toEqual(ALL)
  })

  it('one file cut anywhere (a server) passes through byte for byte', async () => {
    const whole = await collect(concatParquet(from(await blocks('Parquet'))))
    for (const seed of [1, 2, 3]) {
      const chunks = cut(whole, seed)
      expect(chunks.length).toBeGreaterThan(1)
      expect(Buffer.compare(await collect(concatParquet(from(chunks))), whole)).toBe(0)
    }
  })

  it('a small result in one chunk is still one valid file, and an empty one keeps its columns', async () => {
    const one = await collect(concatParquet(from(await blocks('Parquet', `${SQL} LIMIT 10`))))
    expect((await readParquet(one)).rows).toEqual(ALL.slice(0, 10))
    const none = await collect(concatParquet(from(await blocks('Parquet', `${SQL} LIMIT 0`))))
    const empty = await readParquet(none)
    expect(empty.rows).toEqual([])
    expect(Object.keys(empty.types)).toEqual(['n', 'date', 'm', 'x', 's'])
  })

  it('keeps no block in memory once its row group is passed on (only a copy of its footer)', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const [block] = await blocks('Parquet', `${SQL} LIMIT 4000`)
    // The memory itself (a view of it keeps it, not the Buffer object around it).
    const refs: WeakRef<ArrayBufferLike>[] = []
    async function* copies() {
      for (let i = 0; i < 10; i++) {
        const copy = Buffer.from(block!)
        expect(copy.buffer.byteLength).toBe(copy.length)
        refs.push(new WeakRef(copy.buffer))
        yield copy
      }
    }
    const joined = concatParquet(copies())
    // The magic, then eight row groups; the generator is still running (the footer is still to come).
    for (let i = 0; i < 9; i++) expect((await joined.next()).done).toBe(false)
    await new Promise((r) => setTimeout(r, 0))
    gc()
    await new Promise((r) => setTimeout(r, 0))
    expect(refs.slice(0, 7).filter((r) => r.deref() !== undefined)).toHaveLength(0)
    await joined.return(undefined)
  })

  it('holds the row groups for the footer as their bytes, not as parsed fields', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const [block] = await blocks('Parquet', `${SQL} LIMIT 4000`)
    // The block's whole footer (schema and its one row group) bounds what its row group costs.
    const footerLength = new DataView(block!.buffer, block!.byteOffset + block!.length - 8, 4).getUint32(0, true)
    const BLOCKS = 2000
    async function* repeated() {
      for (let i = 0; i < BLOCKS; i++) yield block!
    }
    const joined = concatParquet(repeated())
    gc()
    const before = process.memoryUsage().heapUsed
    // The magic, then every block's row group: only the footer is left to write.
    for (let i = 0; i <= BLOCKS; i++) expect((await joined.next()).done).toBe(false)
    gc()
    const grown = process.memoryUsage().heapUsed - before
    // Parsed, each row group's fields took ten times its bytes and more.
    expect(grown).toBeLessThan(BLOCKS * footerLength * 2)
    const rest = await collect(joined)
    expect(rest.length).toBeGreaterThan(BLOCKS * 8)
  })

  it('refuses blocks of different schemas rather than write a file readers reject', async () => {
    const a = await blocks('Parquet', 'SELECT number AS n FROM numbers(10)')
    const b = await blocks('Parquet', "SELECT toString(number) AS n FROM numbers(10)")
    await expect(collect(concatParquet(from([...a, ...b])))).rejects.toThrow(/different schemas/)
  })
})

describe('Arrow IPC stream', () => {
  it('per-block streams (chDB) become one stream: one schema, every batch, one end marker', async () => {
    const chunks = await blocks('ArrowStream')
    expect(chunks.length).toBeGreaterThan(3)
    // Each chunk alone is a complete stream: concatenated as they are, a reader stops at the first end marker.
    expect(tableFromIPC(Buffer.concat(chunks)).numRows).toBeLessThan(ROWS)
    const joined = await collect(concatArrowStream(from(chunks)))
    const table = tableFromIPC(joined)
    expect(table.batches.length).toBe(chunks.length)
    expect(table.numRows).toBe(ROWS)
    expect(table.getChild('n')!.toArray().every((v: bigint, i: number) => Number(v) === i)).toBe(true)
  })

  it('one stream cut anywhere (a server, or bytes split across reads) comes out byte for byte', async () => {
    const whole = await collect(concatArrowStream(from(await blocks('ArrowStream'))))
    for (const seed of [4, 5, 6]) {
      expect(Buffer.compare(await collect(concatArrowStream(from(cut(whole, seed)))), whole)).toBe(0)
    }
  })

  it('fails a stream that ends inside a message, and blocks of different schemas', async () => {
    const whole = await collect(concatArrowStream(from(await blocks('ArrowStream'))))
    await expect(collect(concatArrowStream(from([whole.subarray(0, whole.length - 100)])))).rejects.toThrow(/inside a message/)
    const a = await blocks('ArrowStream', 'SELECT number AS n FROM numbers(10)')
    const b = await blocks('ArrowStream', 'SELECT toString(number) AS n FROM numbers(10)')
    await expect(collect(concatArrowStream(from([...a, ...b])))).rejects.toThrow(/different schemas/)
  })
})
