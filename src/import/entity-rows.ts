import { clickhouseMillis, parseInstant, RowError } from './event-row.ts'
import { textList } from './text-list.ts'

/**
 * Profiles and groups in OpenPanel's shapes, as rows of `profiles` and `groups`: each field under
 * its column name (a ClickHouse export of OpenPanel's tables) or its camelCase name (the objects
 * its API answers with: `firstName`, `isExternal`, `updatedAt`, nested properties). Other keys
 * are ignored (`projectId`: rows go to the project imported into).
 */

export const ENTITY_TABLES = ['profiles', 'groups'] as const
export type EntityTable = (typeof ENTITY_TABLES)[number]

type Kind = 'id' | 'text' | 'bool' | 'instant' | 'properties' | 'list'

/** Each field: its column, the names it is read under, and how its value is checked. */
const SPECS: Record<EntityTable, { column: string; names: string[]; kind: Kind }[]> = {
  profiles: [
    { column: 'id', names: ['id'], kind: 'id' },
    { column: 'first_name', names: ['first_name', 'firstName'], kind: 'text' },
    { column: 'last_name', names: ['last_name', 'lastName'], kind: 'text' },
    { column: 'email', names: ['email'], kind: 'text' },
    { column: 'avatar', names: ['avatar'], kind: 'text' },
    { column: 'is_external', names: ['is_external', 'isExternal'], kind: 'bool' },
    { column: 'properties', names: ['properties'], kind: 'properties' },
    { column: 'groups', names: ['groups'], kind: 'list' },
    { column: 'created_at', names: ['created_at', 'createdAt'], kind: 'instant' },
    { column: 'last_seen_at', names: ['last_seen_at', 'lastSeenAt'], kind: 'instant' },
  ],
  groups: [
    { column: 'id', names: ['id'], kind: 'id' },
    { column: 'type', names: ['type'], kind: 'id' },
    { column: 'name', names: ['name'], kind: 'id' },
    { column: 'properties', names: ['properties'], kind: 'properties' },
    { column: 'created_at', names: ['created_at', 'createdAt'], kind: 'instant' },
    // OpenPanel's version is the time of the last write in ms; its API calls it updatedAt.
    { column: 'version', names: ['version', 'updatedAt', 'updated_at'], kind: 'instant' },
  ],
}

/** What ClickHouse reads from a Parquet file of this table (see sources.ts). */
export const entityParquetStructure = (table: EntityTable): string =>
  SPECS[table]
    .flatMap(({ kind, names }) =>
      names.map((n) => `${n} ${kind === 'properties' ? 'Map(String, String)' : kind === 'list' ? 'Array(String)' : 'Nullable(String)'}`),
    )
    .join(', ')

/** The columns a CSV header must name (under one of their names). */
export const entityRequired = (table: EntityTable) => SPECS[table].filter((s) => s.kind === 'id').map((s) => ({ column: s.column, names: s.names }))

const fail = (name: string, message: string, v: unknown): never => {
  const text = JSON.stringify(v) ?? String(v)
  throw new RowError(`${name}: ${message}, got ${text.length > 60 ? `${text.slice(0, 57)}…` : text}`)
}

/**
 * OpenPanel stores properties flat with dotted keys (its toDots): nested objects and arrays
 * become `a.b` and `a.0`, values text, and null or empty values are left out. JSON text of an
 * object is read as the object.
 */
function flatProperties(name: string, v: unknown): Record<string, string> {
  if (v === undefined || v === null || v === '') return {}
  let object = v
  if (typeof v === 'string') {
    try {
      object = JSON.parse(v)
    } catch {
      return fail(name, 'expected an object (or its JSON text)', v)
    }
  }
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return fail(name, 'expected an object (or its JSON text)', v)
  const out: Record<string, string> = {}
  const walk = (value: unknown, path: string) => {
    if (value === undefined || value === null || value === '') return
    if (typeof value === 'object') {
      for (const [k, inner] of Object.entries(value as Record<string, unknown>)) walk(inner, path === '' ? k : `${path}.${k}`)
    } else out[path] = String(value)
  }
  walk(object, '')
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

const BOOLEANS: Readonly<Record<string, boolean>> = { true: true, false: false, '1': true, '0': false }

/** The row of `table` for an imported record; throws RowError naming what is wrong. */
export function toEntityRow(table: EntityTable, record: Record<string, unknown>, ctx: { projectId: string; now: number }) {
  const row: Record<string, unknown> = { project_id: ctx.projectId }
  const instants: Record<string, number | undefined> = {}
  for (const { column, names, kind } of SPECS[table]) {
    const label = names.join('/')
    const v = names.map((n) => record[n]).find((x) => x !== undefined && x !== null)
    switch (kind) {
      case 'id':
      case 'text':
        if (v !== undefined && typeof v !== 'string' && typeof v !== 'number') fail(label, 'expected text', v)
        row[column] = v === undefined ? '' : String(v)
        if (kind === 'id' && row[column] === '') fail(label, 'required, expected non-empty text', v ?? null)
        break
      case 'bool':
        if (v === undefined || v === '') row[column] = true
        else if (typeof v === 'boolean') row[column] = v
        else if (String(v).toLowerCase() in BOOLEANS) row[column] = BOOLEANS[String(v).toLowerCase()]
        else fail(label, 'expected true or false', v)
        break
      case 'instant':
        if (v !== undefined && v !== '') {
          const ms = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : parseInstant(v)
          if (ms === undefined || ms < 0 || ms >= Date.UTC(2300, 0, 1)) fail(label, 'expected an ISO 8601 date-time or epoch milliseconds', v)
          instants[column] = ms
        }
        break
      case 'properties':
        row[column] = flatProperties(label, v)
        break
      case 'list':
        row[column] = textList(label, v, fail)
        break
    }
  }
  // First seen: given, else now. Last seen (profiles) and the last write (groups): given, else first seen.
  const created = instants.created_at ?? ctx.now
  row.created_at = clickhouseMillis(created)
  if (table === 'profiles') row.last_seen_at = clickhouseMillis(instants.last_seen_at ?? created)
  else row.version = instants.version ?? created
  return row
}
