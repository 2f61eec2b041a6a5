import { statSync } from 'node:fs'
import { basename } from 'node:path'
import { importEntities } from '../import/entities.ts'
import { ENTITY_TABLES, type EntityTable } from '../import/entity-rows.ts'
import { FileError, importFile, type FileResult, type OnError, type Rejection } from '../import/import.ts'
import { FORMATS, formatOf, type ImportFormat } from '../import/sources.ts'
import { findProject, PROJECT_ID } from '../projects.ts'
import type { Runtime } from '../runtime.ts'
import { CommandError, parse, UsageError } from './usage.ts'

const TABLES = ['events', ...ENTITY_TABLES] as const

export interface ImportRequest {
  projectId: string
  table: 'events' | EntityTable
  onError: OnError
  files: { path: string; format: ImportFormat }[]
}

export function parseImportArgs(args: string[]): ImportRequest {
  const { values, positionals } = parse(
    args,
    { project: { type: 'string' }, table: { type: 'string' }, format: { type: 'string' }, 'on-error': { type: 'string' } },
    Number.MAX_SAFE_INTEGER,
  )
  if (!values.project) throw new UsageError('import needs --project')
  if (!PROJECT_ID.test(values.project)) throw new UsageError(`invalid project id "${values.project}"`)
  const table = values.table ?? 'events'
  if (!(TABLES as readonly string[]).includes(table)) throw new UsageError(`--table must be one of ${TABLES.join(', ')}, got "${table}"`)
  const format = values.format
  if (format !== undefined && !(FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, got "${format}"`)
  }
  const onError = values['on-error'] ?? 'abort'
  if (onError !== 'skip' && onError !== 'abort') throw new UsageError(`--on-error must be skip or abort, got "${onError}"`)
  if (positionals.length === 0) throw new UsageError('import needs at least one file')
  const files = positionals.map((path) => {
    const f = (format as ImportFormat | undefined) ?? formatOf(path)
    if (!f) throw new UsageError(`cannot tell the format of ${path} from its name (.ndjson, .jsonl, .csv, .parquet, .gz); use --format`)
    return { path, format: f }
  })
  return { projectId: values.project, table: table as ImportRequest['table'], onError, files }
}

/** At most this many bad rows per file are printed; the count covers them all. */
const SHOWN_REJECTIONS = 100

/** A one-line progress bar on stderr, redrawn at most every 100 ms (the importer paces it). */
function progressBar(file: string) {
  const width = 30
  let drawn = false
  return {
    draw({ fraction, rows }: { fraction: number | undefined; rows: number }) {
      const bar =
        fraction === undefined
          ? ''
          : (() => {
              const f = Math.max(0, Math.min(1, fraction))
              const full = Math.round(f * width)
              return `[${'='.repeat(full)}${' '.repeat(width - full)}] ${String(Math.floor(f * 100)).padStart(3)}%  `
            })()
      process.stderr.write(`\r\x1b[K${basename(file)}  ${bar}${rows.toLocaleString('en-US')} rows`)
      drawn = true
    },
    end() {
      if (drawn) process.stderr.write('\r\x1b[K')
    },
  }
}

/**
 * Imports the files in order. Prints bad rows on stderr and one JSON line of totals on stdout;
 * returns 1 when a file was aborted (the files after it are left alone), else 0.
 */
export async function importCommand(args: string[], open: () => Promise<Runtime>): Promise<number> {
  const req = parseImportArgs(args)
  for (const { path } of req.files) {
    let isFile = false
    try {
      isFile = statSync(path).isFile()
    } catch {
      // reported below
    }
    if (!isFile) throw new CommandError(`${path}: no such file`)
  }
  const rt = await open()
  const results: FileResult[] = []
  try {
    if (!(await findProject(rt.runner, req.projectId))) {
      throw new CommandError(`project ${req.projectId} does not exist; create it first (quarry projects create ${req.projectId} --timezone …)`)
    }
    const tty = process.stderr.isTTY === true
    for (const { path, format } of req.files) {
      let shown = 0
      const bar = tty ? progressBar(path) : undefined
      const onReject = (r: Rejection) => {
        if (shown++ >= SHOWN_REJECTIONS) return
        bar?.end()
        process.stderr.write(`quarry import: ${r.file}:${r.line}: ${r.message}\n`)
      }
      let result: FileResult
      try {
        const opts = { projectId: req.projectId, format, onError: req.onError, onReject, onProgress: bar ? bar.draw : undefined }
        result = req.table === 'events' ? await importFile(rt.engine, path, opts) : await importEntities(rt.engine, req.table, path, opts)
      } catch (err) {
        if (!(err instanceof FileError)) throw err
        bar?.end()
        process.stderr.write(`quarry import: ${path}: ${err.message}; nothing from it was imported\n`)
        results.push({ file: path, format, imported: 0, duplicates: 0, rejected: 0, aborted: true })
        break
      } finally {
        bar?.end()
      }
      if (result.rejected > SHOWN_REJECTIONS) {
        process.stderr.write(`quarry import: ${path}: ${result.rejected - SHOWN_REJECTIONS} more bad rows not shown\n`)
      }
      results.push(result)
      if (result.aborted) {
        process.stderr.write(
          `quarry import: ${path}: aborted at its first bad row; nothing from it was imported (--on-error skip imports the good rows)\n`,
        )
        break
      }
    }
  } finally {
    await rt.close()
  }
  const sum = (k: 'imported' | 'rejected' | 'duplicates') => results.reduce((n, r) => n + r[k], 0)
  process.stdout.write(
    `${JSON.stringify({
      project: req.projectId,
      imported: sum('imported'),
      rejected: sum('rejected'),
      duplicates: sum('duplicates'),
      files: results,
    })}\n`,
  )
  return results.some((r) => r.aborted) ? 1 : 0
}
