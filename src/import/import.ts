import { randomBytes } from 'node:crypto'
import { resolve } from 'node:path'
import { Readable } from 'node:stream'
import type { Engine } from '../clickhouse/engine/index.ts'
import { IMPORT_COLUMNS, RowError, toEventRow, type EventRow } from './event-row.ts'
import { FileError, openSource, type ImportFormat } from './sources.ts'

/**
 * `quarry import`: rows of a file into `events`, one file at a time.
 *
 * 1. The file is read as a stream (ClickHouse reads Parquet); each row is checked and normalized
 *    in Node and written, in bounded batches, into a staging table of this import. A bad row is
 *    reported with its line; with onError 'abort' reading stops there.
 * 2. Only a file read to its end with nothing aborting it is moved into `events`, in one
 *    INSERT … SELECT that leaves out every id the project already has (and repeats within the
 *    file). Importing a file again therefore adds nothing; a move cut short can be completed by
 *    importing the file again. The sessions view sees the rows like any other insert.
 * 3. The staging table is dropped whatever happens.
 */

export type OnError = 'skip' | 'abort'

export interface Rejection {
  file: string
  line: number
  message: string
}

export interface ImportOptions {
  projectId: string
  format: ImportFormat
  onError: OnError
  /** Each bad row as it is found. */
  onReject?: (r: Rejection) => void
  /** Called now and then while the file is read: fraction read (when known) and rows so far. */
  onProgress?: (p: { fraction: number | undefined; rows: number }) => void
  /** The import's time, imported_at of rows that do not bring one. */
  now?: Date
  /** Rows per staging insert. */
  batchRows?: number
}

export interface FileResult {
  file: string
  format: ImportFormat
  /** Rows moved into events. */
  imported: number
  /** Good rows left out because the project already had their id (or the file repeated it). */
  duplicates: number
  rejected: number
  /** With onError 'abort': the file had a bad row, and nothing of it was imported. */
  aborted: boolean
}

const BATCH_ROWS = 20_000
const BATCH_BYTES = 16 * 1024 * 1024

const COLUMNS = IMPORT_COLUMNS.map(([c]) => c).join(', ')

export async function importFile(engine: Engine, file: string, opts: ImportOptions): Promise<FileResult> {
  const path = resolve(file)
  const tag = randomBytes(8).toString('hex')
  const staging = `quarry_import_${tag}`
  const importedAt = (opts.now ?? new Date()).toISOString().slice(0, 19).replace('T', ' ')
  const batchRows = opts.batchRows ?? BATCH_ROWS
  const result: FileResult = { file, format: opts.format, imported: 0, duplicates: 0, rejected: 0, aborted: false }
  const client = engine.client

  // A plain local table on the node this client talks to, also in cluster mode.
  await client.command({ query: `CREATE TABLE ${staging} AS events ENGINE = MergeTree ORDER BY id` })
  try {
    const source = await openSource(engine, path, opts.format, `quarry_import_${tag}_parquet`)
    let staged = 0
    // One batch is sent while the next is read, so reading and inserting overlap.
    let inFlight: Promise<void> = Promise.resolve()
    try {
      // Rows are serialized once, as they are checked; a batch is sent as those bytes.
      let batch: string[] = []
      let batchBytes = 0
      let lastProgress = 0
      const send = async (lines: string[]) => {
        const result = await client.exec({ query: `INSERT INTO ${staging} FORMAT JSONEachRow`, values: Readable.from(lines) })
        for await (const _ of result.stream) void _
        staged += lines.length
      }
      const flush = async () => {
        await inFlight
        if (batch.length === 0) return
        inFlight = send(batch)
        // A failed insert surfaces at the next flush; until then it must not be unhandled.
        inFlight.catch(() => {})
        batch = []
        batchBytes = 0
      }
      for await (const item of source.items) {
        let row: EventRow | undefined
        let problem: string | undefined
        if ('error' in item) problem = item.error
        else {
          try {
            row = toEventRow(item.record, { projectId: opts.projectId, importedAt })
          } catch (err) {
            if (!(err instanceof RowError)) throw err
            problem = err.message
          }
        }
        if (problem !== undefined) {
          result.rejected++
          opts.onReject?.({ file, line: item.line, message: problem })
          if (opts.onError === 'abort') {
            result.aborted = true
            break
          }
          continue
        }
        const line = `${JSON.stringify(row)}\n`
        batch.push(line)
        batchBytes += line.length
        if (batch.length >= batchRows || batchBytes >= BATCH_BYTES) await flush()
        if (opts.onProgress && performance.now() - lastProgress > 100) {
          lastProgress = performance.now()
          opts.onProgress({ fraction: source.progress(), rows: staged + batch.length })
        }
      }
      if (!result.aborted) await flush()
      await inFlight
      opts.onProgress?.({ fraction: result.aborted ? source.progress() : 1, rows: staged })
    } finally {
      await inFlight.catch(() => {})
      await source.close()
    }
    if (result.aborted || staged === 0) return result
    const moved = await move(engine, staging, opts.projectId)
    return { ...result, imported: moved, duplicates: staged - moved }
  } finally {
    await client.command({ query: `DROP TABLE IF EXISTS ${staging}` })
  }
}

/** Moves the staged rows whose ids the project does not have yet into events; returns how many. */
async function move(engine: Engine, staging: string, projectId: string): Promise<number> {
  const params = { project: projectId }
  // GLOBAL: in cluster mode `events` is Distributed and the staging table exists on this node only,
  // so its ids travel to the shards; on one server it is a plain IN.
  const present = `SELECT id FROM events WHERE project_id = {project:String} AND id GLOBAL IN (SELECT id FROM ${staging})`
  const counted = await engine.client.query({
    query: `SELECT uniqExact(id) AS n FROM ${staging} WHERE id NOT IN (${present})`,
    query_params: params,
    format: 'JSONEachRow',
  })
  const fresh = Number((await counted.json<{ n: string | number }>())[0]?.n ?? 0)
  if (fresh === 0) return 0
  await engine.client.command({
    query:
      // A file may span more months than one insert block may touch by default.
      `INSERT INTO events (${COLUMNS}) SETTINGS max_partitions_per_insert_block = 0 ` +
      `SELECT ${COLUMNS} FROM ${staging} WHERE id NOT IN (${present}) LIMIT 1 BY id`,
    query_params: params,
  })
  return fresh
}

export { FileError }
