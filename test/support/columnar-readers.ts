/**
 * Independent readers for the columnar exports: DuckDB for Parquet, Apache Arrow's JavaScript
 * reader for the IPC stream. Each turns a file into the event objects of the NDJSON export
 * (ISO instants, plain objects for maps, numbers) and reports the column types as the reader sees them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { tableFromIPC, type Table } from 'apache-arrow'

export interface ReadBack {
  rows: Record<string, unknown>[]
  /** Column name → the reader's type name (DuckDB's SQL type; Arrow's type's toString()). */
  types: Record<string, string>
}

const TIMESTAMP_KEYS = new Set(['createdAt', 'importedAt', 'date'])
/** JSON text columns: nested objects whose shape varies (profile, meta). */
const JSON_TEXT_KEYS = new Set(['profile', 'meta'])

function normalized(key: string, value: unknown): unknown {
  if (value === null || value === undefined) return null
  if (TIMESTAMP_KEYS.has(key)) {
    const ms = value instanceof Date ? value.getTime() : Number(value)
    return new Date(ms).toISOString()
  }
  if (JSON_TEXT_KEYS.has(key)) return JSON.parse(String(value))
  if (typeof value === 'bigint') return Number(value)
  return value
}

const normalizeRow = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, normalized(k, v)]))

/** A Parquet file read by DuckDB: timestamps as epoch milliseconds, maps as JSON objects. */
export async function readParquet(bytes: Uint8Array): Promise<ReadBack> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-parquet-'))
  const path = join(dir, 'export.parquet')
  writeFileSync(path, bytes)
  const db = await DuckDBInstance.create(':memory:')
  const conn = await db.connect()
  try {
    const described = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${path}')`)).getRowObjectsJS()
    const types = Object.fromEntries(described.map((r) => [String(r.column_name), String(r.column_type)]))
    const select = Object.entries(types).map(([name, type]) => {
      const q = `"${name}"`
      if (type.startsWith('TIMESTAMP')) return `epoch_ms(${q}) AS ${q}`
      if (type.startsWith('MAP')) return `to_json(${q})::VARCHAR AS ${q}`
      return q
    })
    const rows = (await conn.runAndReadAll(`SELECT ${select.join(', ')} FROM read_parquet('${path}')`)).getRowObjectsJS()
    const mapKeys = Object.entries(types).filter(([, t]) => t.startsWith('MAP')).map(([k]) => k)
    return {
      types,
      rows: rows.map((r) => {
        const row: Record<string, unknown> = { ...r }
        for (const k of mapKeys) row[k] = JSON.parse(String(r[k]))
        return normalizeRow(row)
      }),
    }
  } finally {
    conn.closeSync()
    db.closeSync()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The rows of `sql` over a Parquet file on disk, as view `t` (and its path as `t_path`); integers as numbers. */
export async function readParquetFile(path: string, sql: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(':memory:')
  const conn = await db.connect()
  try {
    const quoted = `'${path.replace(/'/g, "''")}'`
    await conn.run(`CREATE VIEW t AS SELECT * FROM read_parquet(${quoted})`)
    const rows = (await conn.runAndReadAll(sql.replace(/\bt_path\b/g, quoted))).getRowObjectsJS()
    return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])))
  } finally {
    conn.closeSync()
    db.closeSync()
  }
}

/** An Arrow IPC stream read by apache-arrow: a stream with more than one schema or a bad message fails here. */
export function readArrowStream(bytes: Uint8Array): ReadBack & { table: Table } {
  const table = tableFromIPC(bytes)
  const types = Object.fromEntries(table.schema.fields.map((f) => [f.name, String(f.type)]))
  const mapKeys = Object.entries(types).filter(([, t]) => t.startsWith('Map')).map(([k]) => k)
  const listKeys = Object.entries(types).filter(([, t]) => t.startsWith('List')).map(([k]) => k)
  const rows = table.toArray().map((row: { toJSON(): Record<string, unknown> }) => {
    const plain = row.toJSON()
    // A map cell is a MapRow; its JSON form is the plain object.
    for (const k of mapKeys) plain[k] = plain[k] == null ? null : JSON.parse(JSON.stringify(plain[k]))
    // A list cell is a Vector; its items are the values.
    for (const k of listKeys) plain[k] = plain[k] == null ? null : [...(plain[k] as Iterable<unknown>)]
    return normalizeRow(plain)
  })
  return { table, types, rows }
}
