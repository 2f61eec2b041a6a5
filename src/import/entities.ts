import { randomBytes } from 'node:crypto'
import { resolve } from 'node:path'
import { Readable } from 'node:stream'
import type { Engine } from '../clickhouse/engine/index.ts'
import { RowError } from './event-row.ts'
import { entityParquetStructure, entityRequired, toEntityRow, type EntityTable } from './entity-rows.ts'
import type { FileResult, ImportOptions } from './import.ts'
import { openSource } from './sources.ts'

const BATCH_ROWS = 20_000

/**
 * `quarry import --table profiles|groups`: a file of OpenPanel profiles or groups into the project.
 * Both tables keep the latest version of each (project, id) (ReplacingMergeTree, read with FINAL),
 * so the rows go straight in: importing a file again stores the same rows again, which FINAL
 * reads once. With onError 'abort' a bad row stops the file before anything of it is written.
 */
export async function importEntities(engine: Engine, table: EntityTable, file: string, opts: ImportOptions): Promise<FileResult> {
  const result: FileResult = { file, format: opts.format, imported: 0, duplicates: 0, rejected: 0, aborted: false }
  const shape = { required: entityRequired(table), parquet: entityParquetStructure(table) }
  const source = await openSource(engine, resolve(file), opts.format, `quarry_import_${randomBytes(8).toString('hex')}_parquet`, shape)
  const now = (opts.now ?? new Date()).getTime()
  const rows: string[] = []
  try {
    for await (const item of source.items) {
      let problem = 'error' in item ? item.error : undefined
      if (!('error' in item)) {
        try {
          rows.push(`${JSON.stringify(toEntityRow(table, item.record, { projectId: opts.projectId, now }))}\n`)
        } catch (err) {
          if (!(err instanceof RowError)) throw err
          problem = err.message
        }
      }
      if (problem === undefined) continue
      result.rejected++
      opts.onReject?.({ file, line: item.line, message: problem })
      if (opts.onError === 'abort') return { ...result, aborted: true }
    }
  } finally {
    await source.close()
  }
  // Profiles and groups are few next to events: held until the file is read, so an abort writes nothing.
  for (let i = 0; i < rows.length; i += opts.batchRows ?? BATCH_ROWS) {
    const batch = rows.slice(i, i + (opts.batchRows ?? BATCH_ROWS))
    const inserted = await engine.client.exec({ query: `INSERT INTO ${table} FORMAT JSONEachRow`, values: Readable.from(batch) })
    for await (const _ of inserted.stream) void _
    result.imported += batch.length
  }
  opts.onProgress?.({ fraction: 1, rows: result.imported })
  return result
}
