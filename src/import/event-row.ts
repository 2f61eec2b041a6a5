import { createHash } from 'node:crypto'
import { EVENTS_TABLE, type ImportKind } from '../query/event-columns.ts'
import { textList } from './text-list.ts'

/**
 * One imported row as an `events` row: the columns by their `events` names or by OpenPanel's
 * camelCase export names (`deviceId`, `createdAt`, `osVersion`, …), checked and normalized so
 * that ClickHouse accepts the row as it is. Keys that are neither are ignored (an export's
 * `profile` and `meta` objects, for instance).
 */

/** A row that cannot become an event; the message names the field. */
export class RowError extends Error {}

/**
 * Each `events` column, in table order: how an imported value becomes one, the names it is accepted
 * under (its own, then OpenPanel's: its export key) and the label its errors carry.
 */
export const IMPORT_SPECS = EVENTS_TABLE.map(({ name, import: kind, export: { key } }) => {
  const names: readonly string[] = key === name ? [name] : [name, key]
  return { column: name, kind, names, label: names.join('/') }
})

/** Each column and its import kind, in table order: the importer's INSERT names them so. */
export const IMPORT_COLUMNS: ReadonlyArray<readonly [column: string, kind: ImportKind]> = IMPORT_SPECS.map((s) => [s.column, s.kind])

export type EventRow = Record<string, string | number | null | string[] | Record<string, string>>

export interface RowContext {
  projectId: string
  /** `YYYY-MM-DD hh:mm:ss`, UTC: imported_at of rows that do not bring one. */
  importedAt: string
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const UINT64_MAX = 18446744073709551615n
/** DateTime64(3)'s range. */
const MAX_INSTANT_MS = Date.UTC(2300, 0, 1) - 1
/** DateTime's range (imported_at). */
const MAX_DATETIME_MS = Date.UTC(2106, 1, 7, 6, 28, 15)

const describe = (v: unknown) => {
  const text = typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v))
  return text.length > 60 ? `${text.slice(0, 57)}…` : text
}
const fail = (name: string, message: string, v: unknown): never => {
  throw new RowError(`${name}: ${message}, got ${describe(v)}`)
}
const absent = (v: unknown) => v === undefined || v === null

function text(name: string, v: unknown): string {
  if (absent(v)) return ''
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v)
  return fail(name, 'expected text', v)
}

function count(name: string, v: unknown): number | string {
  if (absent(v) || v === '') return 0
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v) && v >= 0) return v
    return fail(name, 'expected a whole number of at least 0', v)
  }
  if (typeof v === 'string' && /^\s*\d+\s*$/.test(v)) {
    const n = BigInt(v.trim())
    if (n <= UINT64_MAX) return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString()
  }
  return fail(name, 'expected a whole number of at least 0', v)
}

const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/

function coordinate(name: string, v: unknown, limit: number): number | null {
  if (absent(v) || v === '' || v === '\\N') return null
  const n = typeof v === 'number' ? v : typeof v === 'string' && DECIMAL.test(v) ? Number(v) : Number.NaN
  if (!Number.isFinite(n) || Math.abs(n) > limit) return fail(name, `expected a number from -${limit} to ${limit} or nothing`, v)
  return n
}

// 2026-04-14T22:37:12.345Z, 2026-04-14 22:37:12.345 (UTC, as ClickHouse writes it), 2026-04-14, offsets.
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i

/** Milliseconds since the epoch of an ISO 8601 / ClickHouse date-time (UTC unless it says otherwise), or epoch milliseconds. */
export function parseInstant(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? Math.floor(v) : undefined
  if (typeof v !== 'string') return undefined
  const m = INSTANT.exec(v.trim())
  if (!m) return undefined
  const [y, mo, d, h = 0, mi = 0, s = 0] = m.slice(1, 7).map((x) => (x === undefined ? undefined : Number(x))) as number[]
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0
  if (mo! < 1 || mo! > 12 || d! < 1 || h > 23 || mi > 59 || s > 59) return undefined
  const local = Date.UTC(y!, mo! - 1, d!, h, mi, s, ms)
  if (new Date(local).getUTCDate() !== d) return undefined // 2026-02-30
  let offset = 0
  const zone = m[8]
  if (zone && zone.toUpperCase() !== 'Z') {
    const digits = zone.replace(':', '')
    const minutes = Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5) || '0')
    offset = (digits[0] === '-' ? -1 : 1) * minutes * 60_000
  }
  return local - offset
}

/** `YYYY-MM-DD hh:mm:ss.mmm`, UTC. */
export const clickhouseMillis = (ms: number) => new Date(ms).toISOString().slice(0, 23).replace('T', ' ')

function instant(name: string, v: unknown, required: boolean, max: number): string | null {
  if (absent(v) || v === '' || v === '\\N') return required ? fail(name, 'required, expected a date-time', v ?? null) : null
  const ms = parseInstant(v)
  if (ms === undefined) return fail(name, 'expected an ISO 8601 date-time (e.g. 2026-04-14T22:37:12.345Z)', v)
  if (ms < 0 || ms > max) return fail(name, `expected a date-time from 1970 to ${new Date(max).getUTCFullYear()}`, v)
  return clickhouseMillis(ms)
}

/** ClickHouse's text form of a Map(String, String): {'key':'value',…}, as a CSV export of the table writes it. */
function parseMapLiteral(s: string): Record<string, string> | undefined {
  const out: Record<string, string> = {}
  let i = 1
  const skip = () => {
    while (s[i] === ' ') i++
  }
  const str = (): string | undefined => {
    if (s[i] !== "'") return undefined
    let value = ''
    for (i++; i < s.length; i++) {
      const ch = s[i]!
      if (ch === '\\') {
        const next = s[++i]
        value += next === 'n' ? '\n' : next === 't' ? '\t' : next === 'r' ? '\r' : next === '0' ? '\0' : (next ?? '')
      } else if (ch === "'") {
        i++
        return value
      } else value += ch
    }
    return undefined
  }
  skip()
  if (s[i] === '}') return i === s.length - 1 ? out : undefined
  for (;;) {
    skip()
    const key = str()
    skip()
    if (key === undefined || s[i++] !== ':') return undefined
    skip()
    const value = str()
    if (value === undefined) return undefined
    out[key] = value
    skip()
    if (s[i] === ',') {
      i++
      continue
    }
    return s[i] === '}' && i === s.length - 1 ? out : undefined
  }
}

function properties(name: string, v: unknown): Record<string, string> {
  if (absent(v) || v === '') return {}
  let object: unknown = v
  if (typeof v === 'string') {
    const trimmed = v.trim()
    try {
      object = JSON.parse(trimmed)
    } catch {
      object = trimmed.startsWith('{') ? parseMapLiteral(trimmed) : undefined
    }
  }
  if (typeof object !== 'object' || object === null || Array.isArray(object)) {
    return fail(name, 'expected an object of text values (or its JSON text)', v)
  }
  const out: Record<string, string> = {}
  // Sorted, so that the same properties make the same row whatever order a file lists them in.
  for (const key of Object.keys(object).sort()) {
    const value = (object as Record<string, unknown>)[key]
    if (value === undefined || value === null) out[key] = ''
    else if (typeof value === 'string') out[key] = value
    else if (typeof value === 'object') out[key] = JSON.stringify(value)
    else out[key] = String(value)
  }
  return out
}

/**
 * A deterministic id for a row that has none, so that importing the file again finds the same
 * events: a name-based (version 5 style) UUID of the project and the row's content.
 */
function derivedId(projectId: string, row: EventRow): string {
  // Without groups when it has none: rows imported before events had groups keep their ids.
  const { groups, ...rest } = row
  const content = Array.isArray(groups) && groups.length === 0 ? rest : row
  const hash = createHash('sha1').update(`${projectId}\0${JSON.stringify(content)}`).digest()
  hash[6] = (hash[6]! & 0x0f) | 0x50
  hash[8] = (hash[8]! & 0x3f) | 0x80
  const hex = hash.subarray(0, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** The value of a column: under its own name, else under OpenPanel's. */
function lookup(record: Record<string, unknown>, names: readonly string[]): unknown {
  for (const name of names) {
    const v = record[name]
    if (!absent(v)) return v
  }
  return undefined
}

/** The `events` row for an imported record, in table column order; throws RowError naming what is wrong. */
export function toEventRow(record: Record<string, unknown>, ctx: RowContext): EventRow {
  const row: EventRow = {}
  let id: string | undefined
  let importedAt: string | null = null
  for (const { column, kind, names, label } of IMPORT_SPECS) {
    const v = lookup(record, names)
    switch (kind) {
      case 'uuid':
        if (!absent(v) && v !== '') {
          if (typeof v !== 'string' || !UUID.test(v)) fail(label, 'expected a UUID', v)
          id = (v as string).toLowerCase()
        }
        break
      case 'text':
        row[column] = text(label, v)
        break
      case 'project':
        row[column] = ctx.projectId
        break
      case 'instant':
        row[column] = instant(label, v, true, MAX_INSTANT_MS)
        break
      case 'optional-instant':
        importedAt = instant(label, v, false, MAX_DATETIME_MS)?.slice(0, 19) ?? null
        break
      case 'count':
        row[column] = count(label, v)
        break
      case 'coordinate':
        row[column] = coordinate(label, v, column === 'latitude' ? 90 : 180)
        break
      case 'map':
        row[column] = properties(label, v)
        break
      case 'list':
        row[column] = textList(label, v, fail)
        break
    }
  }
  if (row.name === '') fail('name', 'required, expected the event name', lookup(record, ['name']) ?? null)
  // OpenPanel's convention: an anonymous visitor's profile is its device.
  if (row.profile_id === '') row.profile_id = row.device_id!
  return { id: id ?? derivedId(ctx.projectId, row), ...row, imported_at: importedAt ?? ctx.importedAt }
}
