import type { Shape } from './export-formats.ts'

/**
 * The `events` table, declared once: each column in table order (sql/schema/001_events.sql) with
 * what filters, charts, the importer and /export/events need to know of it. Their lists are
 * derived from this, and test/vocabulary.test.ts holds the declaration to the table itself.
 */

/** How a column compares: decides the operators' SQL and which values are valid. */
export type ColumnKind = 'string' | 'number' | 'datetime' | 'uuid'

/** How an imported value becomes the column's value (src/import/event-row.ts). */
export type ImportKind = 'uuid' | 'text' | 'project' | 'instant' | 'optional-instant' | 'count' | 'coordinate' | 'map' | 'list'

/**
 * The names `includes` takes, in the order the API lists them: the groups, then OpenPanel's
 * field names. A name adds the fields of its group and the field whose key it is.
 */
export const INCLUDE_NAMES = [
  'profile',
  'meta',
  'properties',
  'geo',
  'device',
  'referrer',
  'region',
  'latitude',
  'longitude',
  'osVersion',
  'browserVersion',
  'brand',
  'model',
  'origin',
  'referrerName',
  'referrerType',
  'importedAt',
  'sdkName',
  'sdkVersion',
  'revenue',
] as const
export type IncludeName = (typeof INCLUDE_NAMES)[number]

/** A key of the exported event object. */
export interface ExportField {
  /** OpenPanel's name for it. */
  key: string
  /** In every event object ('default'), or added by this include group (and always by its own key, if that is an include name). */
  group?: 'default' | IncludeName
  /** Raw `events` columns the expression reads. */
  columns: readonly string[]
  sql: (shape: Shape) => string
  join?: 'profile' | 'meta'
}

export interface EventColumn {
  name: string
  /** As system.columns spells it. How filters compare the column follows from it. */
  type: string
  /** Absent for a Map: filters reach its values by key (`properties.<key>`), not by its name. */
  kind?: ColumnKind
  /** Float32 values: filters compare them with Float32 literals, so that 12.3 finds the stored 12.3. */
  float32: boolean
  /** Nullable: isNull means NULL, where other columns hold no NULL to find. */
  nullable: boolean
  import: ImportKind
  /** Its place among the columns in the event object: OpenPanel's order, not the table's. The joined fields follow. */
  exportAt: number
  export: ExportField
  /** False when a chart breakdown by it makes no sense: one value per project, or one per event. */
  breakdown: boolean
}

/** The kind of each ClickHouse type the table uses, wrappers (Nullable, LowCardinality) and parameters aside. */
const KIND_OF_TYPE: Readonly<Record<string, ColumnKind | undefined>> = {
  UUID: 'uuid',
  String: 'string',
  UInt64: 'number',
  Float32: 'number',
  DateTime64: 'datetime',
  DateTime: 'datetime',
  Map: undefined,
  // Group ids: filters reach them as group.id, not by the column's name (as in OpenPanel).
  Array: undefined,
}

/** `LowCardinality(String)` → String, `Nullable(DateTime('UTC'))` → DateTime. */
const baseType = (type: string) => type.replace(/^(?:(?:Nullable|LowCardinality)\()+/, '').replace(/[()].*$/, '')

const camelCase = (snake: string): string => snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())

/** `YYYY-MM-DDThh:mm:ss.mmmZ` of a DateTime64(3, 'UTC') column, as ClickHouse writes it. */
const iso = (column: string) => `concat(replaceOne(toString(${column}), ' ', 'T'), 'Z')`
/** A map or a list: JSON text in CSV, a column of that type in the columnar formats. */
const nested = (expr: string) => (shape: Shape) => (shape === 'csv' ? `toJSONString(${expr})` : expr)
/** Objects with nested properties of any shape (profile) or none (meta): JSON text outside JSON, no column type holds them. */
const object = (expr: string) => (shape: Shape) => (shape === 'json' ? expr : `toJSONString(${expr})`)
/** The columnar formats type instants as UTC timestamps; the text ones write ISO text. */
const instant = (column: string, text: string) => (shape: Shape) => (shape === 'columnar' ? column : text)

/** What a column declares; the rest follows from its name and type. */
interface Declared {
  import: ImportKind
  /** Its exportAt. */
  at: number
  group?: ExportField['group']
  /** When the export writes something else than the column as it is. */
  sql?: ExportField['sql']
  breakdown?: false
}

function column(name: string, type: string, d: Declared): EventColumn {
  const base = baseType(type)
  // A type no kind is known for must be decided on, not left unfilterable by accident.
  if (!Object.hasOwn(KIND_OF_TYPE, base)) throw new Error(`events.${name}: no filter kind for ${type}`)
  const sql = d.sql ?? (() => `e.${name}`)
  return {
    name,
    type,
    kind: KIND_OF_TYPE[base],
    float32: base === 'Float32',
    nullable: type.startsWith('Nullable('),
    import: d.import,
    exportAt: d.at,
    export: { key: camelCase(name), columns: [name], sql, ...(d.group ? { group: d.group } : {}) },
    breakdown: d.breakdown ?? true,
  }
}

export const EVENTS_TABLE: readonly EventColumn[] = [
  // As text in every format: a 16-byte binary cell would read as other bytes than the NDJSON id.
  column('id', 'UUID', { import: 'uuid', at: 0, group: 'default', sql: (shape) => (shape === 'columnar' ? 'toString(e.id)' : 'e.id'), breakdown: false }),
  column('name', 'LowCardinality(String)', { import: 'text', at: 1, group: 'default' }),
  column('device_id', 'String', { import: 'text', at: 2, group: 'default' }),
  column('profile_id', 'String', { import: 'text', at: 3, group: 'default' }),
  column('project_id', 'String', { import: 'project', at: 4, group: 'default', breakdown: false }),
  column('session_id', 'String', { import: 'text', at: 5, group: 'default' }),
  // OpenPanel's default object always has groups; its export writes [] unless includes=groups asks
  // for them, Quarry writes the event's groups whatever includes says.
  column('groups', 'Array(String)', { import: 'list', at: 14, group: 'default', sql: nested('e.groups'), breakdown: false }),
  column('created_at', "DateTime64(3, 'UTC')", { import: 'instant', at: 6, group: 'default', sql: instant('e.created_at', iso('e.created_at')), breakdown: false }),
  column('path', 'String', { import: 'text', at: 7, group: 'default' }),
  column('origin', 'LowCardinality(String)', { import: 'text', at: 8, group: 'default' }),
  column('referrer', 'String', { import: 'text', at: 24, group: 'referrer' }),
  column('referrer_name', 'LowCardinality(String)', { import: 'text', at: 25, group: 'referrer' }),
  column('referrer_type', 'LowCardinality(String)', { import: 'text', at: 26, group: 'referrer' }),
  column('duration', 'UInt64', { import: 'count', at: 13, group: 'default' }),
  column('revenue', 'UInt64', { import: 'count', at: 30 }),
  column('properties', 'Map(String, String)', { import: 'map', at: 15, sql: nested('e.properties') }),
  column('country', 'LowCardinality(String)', { import: 'text', at: 9, group: 'default' }),
  column('city', 'LowCardinality(String)', { import: 'text', at: 10, group: 'default' }),
  column('region', 'LowCardinality(String)', { import: 'text', at: 16, group: 'geo' }),
  column('longitude', 'Nullable(Float32)', { import: 'coordinate', at: 18, group: 'geo' }),
  column('latitude', 'Nullable(Float32)', { import: 'coordinate', at: 17, group: 'geo' }),
  column('os', 'LowCardinality(String)', { import: 'text', at: 11, group: 'default' }),
  column('os_version', 'LowCardinality(String)', { import: 'text', at: 22, group: 'device' }),
  column('browser', 'LowCardinality(String)', { import: 'text', at: 12, group: 'default' }),
  column('browser_version', 'LowCardinality(String)', { import: 'text', at: 23, group: 'device' }),
  column('device', 'LowCardinality(String)', { import: 'text', at: 19, group: 'device' }),
  column('brand', 'LowCardinality(String)', { import: 'text', at: 20, group: 'device' }),
  column('model', 'LowCardinality(String)', { import: 'text', at: 21, group: 'device' }),
  column('sdk_name', 'LowCardinality(String)', { import: 'text', at: 28 }),
  column('sdk_version', 'LowCardinality(String)', { import: 'text', at: 29 }),
  column('imported_at', "Nullable(DateTime('UTC'))", {
    import: 'optional-instant',
    at: 27,
    sql: instant(
      "toDateTime64(e.imported_at, 3, 'UTC')",
      "if(e.imported_at IS NULL, NULL, formatDateTime(e.imported_at, '%Y-%m-%dT%H:%i:%S.000Z', 'UTC'))",
    ),
    breakdown: false,
  }),
]

/**
 * OpenPanel's profile object, key for key. `properties` is ClickHouse's JSON type, so that dotted
 * keys (`address.city`) come out nested as OpenPanel's toObject writes them.
 */
export const PROFILE_OBJECT =
  'Tuple(id String, email String, avatar String, firstName String, lastName String, createdAt String, ' +
  'lastSeenAt String, isExternal Bool, projectId String, groups Array(String), properties JSON)'
/** Its meta object; a Variant because an event without meta has null, which no Tuple can hold. */
const META_VARIANT =
  'Variant(Tuple(id String, name String, conversion Bool, color String, icon String, projectId String, createdAt String, updatedAt String))'

/** The export fields that are no column, after the columns in the event object: lookups joined in by the event's columns. */
export const JOINED_FIELDS: readonly ExportField[] = [
  {
    // A stored profile as a whole; otherwise the same object with empty fields, first and last
    // seen at this event: an anonymous visitor (profile_id = device_id) is not external, an
    // identified one without a row is.
    key: 'profile',
    columns: ['profile_id', 'device_id', 'project_id', 'created_at'],
    join: 'profile',
    sql: object(
      `if(pr.profile_found = 1, pr.profile_object, CAST((e.profile_id, '', '', '', '', ${iso('e.created_at')}, ${iso('e.created_at')}, ` +
        `e.profile_id != e.device_id, e.project_id, [], '{}'), '${PROFILE_OBJECT}'))`,
    ),
  },
  {
    key: 'meta',
    columns: ['name'],
    join: 'meta',
    sql: object(`if(m.meta_found = 1, CAST(m.meta_object, '${META_VARIANT}'), NULL)`),
  },
]

/** The columns filters and breakdowns name, in table order, with how each compares. */
export const EVENT_COLUMNS: ReadonlyArray<readonly [name: string, kind: ColumnKind]> = EVENTS_TABLE.flatMap((c) =>
  c.kind ? [[c.name, c.kind] as const] : [],
)

export const UTM_FIELDS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const

/** OpenPanel stores UTM values as flattened query-string properties. */
export const utmPropertyKey = (field: string): string => `__query.${field}`

const kindByName = new Map<string, { column: string; kind: ColumnKind }>()
for (const { name, kind, export: { key } } of EVENTS_TABLE) {
  if (!kind) continue
  kindByName.set(name, { column: name, kind })
  kindByName.set(key, { column: name, kind })
}

/** An events column by its name or OpenPanel's camelCase alias (`referrerName`). */
export const findEventColumn = (name: string) => kindByName.get(name)

/** The names of the columns `keep` selects, in table order. */
export const eventColumnNames = (keep: (c: EventColumn) => boolean): string[] => EVENTS_TABLE.filter(keep).map((c) => c.name)
