import { createReadStream, statSync } from 'node:fs'
import { Readable } from 'node:stream'
import { createGunzip } from 'node:zlib'
import { StringDecoder } from 'node:string_decoder'
import type { Engine } from '../clickhouse/engine/index.ts'
import { IMPORT_SPECS } from './event-row.ts'
import { readCsv } from './csv.ts'

export const FORMATS = ['ndjson', 'csv', 'parquet'] as const
export type ImportFormat = (typeof FORMATS)[number]

/** The format a file name says, if it says one (`.gz` allowed for the text formats). */
export function formatOf(file: string): ImportFormat | undefined {
  const name = file.toLowerCase().replace(/\.gz$/, '')
  if (/\.(ndjson|jsonl)$/.test(name)) return 'ndjson'
  if (name.endsWith('.csv')) return 'csv'
  if (/\.(parquet|pq)$/.test(file.toLowerCase())) return 'parquet'
  return undefined
}

/** One row of a file: its fields by name, or why it is not a row; `line` is 1-based. */
export type SourceItem = { line: number; record: Record<string, unknown> } | { line: number; error: string }

export interface Source {
  items: AsyncIterable<SourceItem>
  /** How far through the file the rows read so far are, 0 to 1, when that can be told. */
  progress(): number | undefined
  /** Removes what reading the file left behind (HTTP Parquet's upload table). */
  close(): Promise<void>
}

/** A file that cannot be read as its format at all (no header, unreadable Parquet): nothing is imported from it. */
export class FileError extends Error {}

function byteStream(path: string): { stream: Readable; progress: () => number; destroy: () => void } {
  const size = statSync(path).size
  const raw = createReadStream(path)
  const stream = path.toLowerCase().endsWith('.gz') ? raw.pipe(createGunzip()) : raw
  if (stream !== raw) raw.on('error', (err) => stream.destroy(err))
  // Bytes of the file read so far (compressed ones for .gz), without a listener that would make it flow.
  const destroy = () => {
    stream.destroy()
    raw.destroy()
  }
  return { stream, progress: () => (size === 0 ? 1 : raw.bytesRead / size), destroy }
}

async function* decode(stream: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8')
  let first = true
  for await (const chunk of stream) {
    let text = decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
    if (first && text.length > 0) {
      text = text.replace(/^\uFEFF/, '')
      first = false
    }
    yield text
  }
  const rest = decoder.end()
  if (rest) yield rest
}

/** Lines of text (LF or CRLF), without their ends; the last one even without an end. */
async function* splitLines(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let rest = ''
  for await (const chunk of chunks) {
    rest += chunk
    let start = 0
    let nl: number
    while ((nl = rest.indexOf('\n', start)) >= 0) {
      yield rest.slice(start, nl > start && rest.charCodeAt(nl - 1) === 13 ? nl - 1 : nl)
      start = nl + 1
    }
    rest = rest.slice(start)
  }
  if (rest !== '') yield rest.endsWith('\r') ? rest.slice(0, -1) : rest
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

export function ndjsonSource(path: string): Source {
  const { stream, progress, destroy } = byteStream(path)
  async function* items(): AsyncGenerator<SourceItem> {
    let line = 0
    try {
      for await (const text of splitLines(decode(stream))) {
        line++
        if (text.trim() === '') continue
        let value: unknown
        try {
          value = JSON.parse(text)
        } catch (err) {
          yield { line, error: `not valid JSON (${(err as Error).message})` }
          continue
        }
        yield isObject(value) ? { line, record: value } : { line, error: 'expected a JSON object' }
      }
    } finally {
      destroy()
    }
  }
  return { items: items(), progress, close: async () => destroy() }
}

/**
 * What a file of one table holds: the columns a CSV header must name (each under one of its names)
 * and the structure ClickHouse reads a Parquet file with.
 */
export interface RecordShape {
  required: readonly { column: string; names: readonly string[] }[]
  parquet: string
}

export function csvSource(path: string, shape: RecordShape = EVENT_SHAPE): Source {
  const { stream, progress, destroy } = byteStream(path)
  async function* items(): AsyncGenerator<SourceItem> {
    let header: string[] | undefined
    try {
      for await (const item of readCsv(decode(stream))) {
        if ('error' in item) {
          if (!header) throw new FileError(`the CSV header ${item.error}`)
          yield item
          continue
        }
        if (!header) {
          header = item.cells.map((c) => (c ?? '').trim())
          checkHeader(header, shape)
          continue
        }
        if (item.cells.length !== header.length) {
          yield { line: item.line, error: `expected ${header.length} cells as in the header, got ${item.cells.length}` }
          continue
        }
        const record: Record<string, unknown> = {}
        header.forEach((name, i) => (record[name] = item.cells[i]))
        yield { line: item.line, record }
      }
      if (!header) throw new FileError('the file is empty: a CSV file starts with a header row')
    } finally {
      destroy()
    }
  }
  return { items: items(), progress, close: async () => destroy() }
}

function checkHeader(header: string[], shape: RecordShape): void {
  const seen = new Set<string>()
  for (const name of header) {
    if (seen.has(name)) throw new FileError(`the CSV header names "${name}" twice`)
    seen.add(name)
  }
  const missing = shape.required.filter((c) => !c.names.some((n) => seen.has(n))).map((c) => c.column)
  if (missing.length > 0) {
    throw new FileError(`the CSV header row has no ${missing.join(' or ')} column (line 1 must name the columns)`)
  }
}

/**
 * What ClickHouse reads from a Parquet file: every accepted column name, as text (so one checker
 * serves every format), and the properties map. Columns missing from the file read as NULL, others
 * are ignored.
 */
export const PARQUET_STRUCTURE = IMPORT_SPECS.flatMap(({ kind, names }) =>
  names.map((n) => `${n} ${kind === 'map' ? 'Map(String, String)' : kind === 'list' ? 'Array(String)' : 'Nullable(String)'}`),
).join(', ')

export const EVENT_SHAPE: RecordShape = {
  required: IMPORT_SPECS.filter((s) => s.column === 'name' || s.column === 'created_at').map((s) => ({ column: s.column, names: s.names })),
  parquet: PARQUET_STRUCTURE,
}

const PARQUET_SETTINGS = 'input_format_parquet_preserve_order = 1, max_threads = 1'

/** Rows of JSONEachRow bytes with their `__line`. */
async function* jsonRows(chunks: AsyncIterable<Uint8Array>, onRow: () => void): AsyncGenerator<SourceItem> {
  for await (const text of splitLines(decode(chunks))) {
    if (text === '') continue
    const { __line, ...record } = JSON.parse(text) as Record<string, unknown>
    onRow()
    yield { line: Number(__line), record }
  }
}

const parquetFailure = (err: unknown) =>
  new FileError(`ClickHouse could not read it as Parquet: ${String((err as Error)?.message ?? err).split('\n')[0]}`)

/**
 * Parquet is read by ClickHouse. The embedded engine reads the file itself (file()); a server gets
 * the bytes streamed in an INSERT … FROM input() into a scratch table, read back in file order.
 */
export async function parquetSource(engine: Engine, path: string, scratch: string, structure = PARQUET_STRUCTURE): Promise<Source> {
  let total = 0
  let done = 0
  const progress = () => (total === 0 ? undefined : done / total)
  if (engine.mode === 'embedded') {
    try {
      const result = await engine.client.query({
        query: 'SELECT count() AS n FROM file({path:String}, Parquet)',
        query_params: { path },
        format: 'JSONEachRow',
      })
      total = Number((await result.json<{ n: string }>())[0]?.n ?? 0)
    } catch (err) {
      throw parquetFailure(err)
    }
    const chunks = engine.streamRaw({
      sql:
        `SELECT _row_number + 1 AS __line, * FROM file({path:String}, Parquet, '${structure}') ` +
        `SETTINGS ${PARQUET_SETTINGS} FORMAT JSONEachRow`,
      params: { path },
      queryId: scratch,
    })
    return { items: failuresAsFileErrors(jsonRows(chunks, () => done++)), progress, close: async () => {} }
  }

  await engine.client.command({
    query: `CREATE TABLE ${scratch} (__line UInt64, ${structure}) ENGINE = MergeTree ORDER BY __line`,
  })
  const close = async () => {
    await engine.client.command({ query: `DROP TABLE IF EXISTS ${scratch}` })
  }
  try {
    const { stream } = byteStream(path)
    const upload = await engine.client.exec({
      query: `INSERT INTO ${scratch} SELECT rowNumberInAllBlocks() + 1, * FROM input('${structure}') FORMAT Parquet`,
      values: stream,
      // One reader in file order, so that the row numbers are the file's.
      clickhouse_settings: { input_format_parquet_preserve_order: 1, max_threads: 1 },
    })
    // The server answers once the insert is done; the (empty) body is read to free the socket.
    for await (const _ of upload.stream) void _
    const result = await engine.client.query({ query: `SELECT count() AS n FROM ${scratch}`, format: 'JSONEachRow' })
    total = Number((await result.json<{ n: string }>())[0]?.n ?? 0)
  } catch (err) {
    await close()
    throw parquetFailure(err)
  }
  const chunks = engine.streamRaw({
    sql: `SELECT * FROM ${scratch} ORDER BY __line FORMAT JSONEachRow`,
    params: {},
    queryId: `${scratch}_read`,
  })
  return { items: failuresAsFileErrors(jsonRows(chunks, () => done++)), progress, close }
}

async function* failuresAsFileErrors(items: AsyncIterable<SourceItem>): AsyncGenerator<SourceItem> {
  try {
    yield* items
  } catch (err) {
    throw err instanceof FileError ? err : parquetFailure(err)
  }
}

export async function openSource(engine: Engine, path: string, format: ImportFormat, scratch: string, shape = EVENT_SHAPE): Promise<Source> {
  if (format === 'ndjson') return ndjsonSource(path)
  if (format === 'csv') return csvSource(path, shape)
  return parquetSource(engine, path, scratch, shape.parquet)
}
