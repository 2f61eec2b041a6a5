/** How a column compares: decides the operators' SQL and which values are valid. */
export type ColumnKind = 'string' | 'number' | 'datetime' | 'uuid'

/** The `events` columns, in table order (sql/schema/001_events.sql), with how each compares. */
export const EVENT_COLUMNS: ReadonlyArray<readonly [name: string, kind: ColumnKind]> = [
  ['id', 'uuid'],
  ['name', 'string'],
  ['device_id', 'string'],
  ['profile_id', 'string'],
  ['project_id', 'string'],
  ['session_id', 'string'],
  ['created_at', 'datetime'],
  ['path', 'string'],
  ['origin', 'string'],
  ['referrer', 'string'],
  ['referrer_name', 'string'],
  ['referrer_type', 'string'],
  ['duration', 'number'],
  ['revenue', 'number'],
  ['country', 'string'],
  ['city', 'string'],
  ['region', 'string'],
  ['longitude', 'number'],
  ['latitude', 'number'],
  ['os', 'string'],
  ['os_version', 'string'],
  ['browser', 'string'],
  ['browser_version', 'string'],
  ['device', 'string'],
  ['brand', 'string'],
  ['model', 'string'],
  ['sdk_name', 'string'],
  ['sdk_version', 'string'],
  ['imported_at', 'datetime'],
]

export const UTM_FIELDS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const

/** OpenPanel stores UTM values as flattened query-string properties. */
export const utmPropertyKey = (field: string): string => `__query.${field}`

export const camelCase = (snake: string): string => snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())

const kindByName = new Map<string, { column: string; kind: ColumnKind }>()
for (const [column, kind] of EVENT_COLUMNS) {
  kindByName.set(column, { column, kind })
  kindByName.set(camelCase(column), { column, kind })
}

/** An events column by its name or OpenPanel's camelCase alias (`referrerName`). */
export const findEventColumn = (name: string) => kindByName.get(name)
