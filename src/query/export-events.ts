import { DateTime } from 'luxon'
import type { Statement } from '../clickhouse/run.ts'
import { invalidParameters, type ErrorDetail } from './errors.ts'
import { EVENTS_TABLE, INCLUDE_NAMES, JOINED_FIELDS, PROFILE_OBJECT, type ExportField } from './event-columns.ts'
import { EXPORT_FORMATS, type ExportFormatName } from './export-formats.ts'
import { compileFilters, type Filter } from './filters.ts'
import { SqlParams } from './sql-params.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant, parseBoundary } from './time-range.ts'

const INSTANT = "DateTime64(3, 'UTC')"

/** Every field an event object can carry, in output order. Only these expressions ever reach the SQL text. */
const FIELDS: readonly ExportField[] = [...[...EVENTS_TABLE].sort((a, b) => a.exportAt - b.exportAt).map((c) => c.export), ...JOINED_FIELDS]

export const DEFAULT_FIELDS: readonly string[] = FIELDS.filter((f) => f.group === 'default').map((f) => f.key)

/** The keys of the event objects (and the CSV columns) for these fields, in output order. */
export const outputKeys = (fields: ReadonlySet<string>): string[] => FIELDS.filter((f) => fields.has(f.key)).map((f) => f.key)

/** What each `includes` name adds: its group's fields, or the field of that key (OpenPanel's field-level names). */
export const INCLUDE_GROUPS: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  INCLUDE_NAMES.map((name) => [name, FIELDS.filter((f) => f.group === name || f.key === name).map((f) => f.key)]),
)

/**
 * The output fields for `includes`: comma-separated and/or repeated names, groups or fields.
 * Returns the names in a canonical order (also what a cursor fingerprints), and apart the names
 * of default fields (ignored); unknown → 400.
 */
export function resolveIncludes(raw: string | readonly string[] | undefined): { names: string[]; fields: Set<string>; ignored: string[] } {
  const list = (raw === undefined ? [] : typeof raw === 'string' ? [raw] : raw)
    .flatMap((item) => item.split(','))
    .map((name) => name.trim())
    .filter((name) => name.length > 0)
  // OpenPanel takes the name of a field every event object has, and changes nothing.
  const ignored = [...new Set(list.filter((name) => !Object.hasOwn(INCLUDE_GROUPS, name) && DEFAULT_FIELDS.includes(name)))]
  const unknown = list.filter((name) => !Object.hasOwn(INCLUDE_GROUPS, name) && !DEFAULT_FIELDS.includes(name))
  if (unknown.length > 0) {
    throw invalidParameters(
      unknown.map((name) => ({
        path: 'includes',
        message: `unknown include "${name}"; expected any of ${Object.keys(INCLUDE_GROUPS).join(', ')}`,
      })),
    )
  }
  const names = [...new Set(list.filter((name) => !ignored.includes(name)))].sort()
  const fields = new Set(DEFAULT_FIELDS)
  for (const name of names) for (const field of INCLUDE_GROUPS[name]!) fields.add(field)
  return { names, fields, ignored }
}

/** A half-open window [from, to) of instants; `timezone` read the dates that made it. */
export interface ExportWindow {
  from: DateTime
  to: DateTime
  timezone: string
}

/**
 * The window of an export. Without `end` it ends now; without `start` it begins at the Unix epoch:
 * all time, as OpenPanel exports without dates (an exporter walking pages must not miss older
 * events). OpenPanel applies dates only when both are present, and then as whole UTC days.
 */
export function resolveExportWindow(start: string | undefined, end: string | undefined, timezone: string, now: Date): ExportWindow {
  const issues: ErrorDetail[] = []
  const message = 'expected YYYY-MM-DD or an ISO 8601 date-time'
  const to = end === undefined ? DateTime.fromJSDate(now, { zone: timezone }) : parseBoundary(end, 'end', timezone)
  if (!to) issues.push({ path: 'end', message })
  const from = start === undefined ? DateTime.fromMillis(0, { zone: timezone }) : parseBoundary(start, 'start', timezone)
  if (!from && start !== undefined) issues.push({ path: 'start', message })
  if (issues.length === 0 && from! >= to!) issues.push({ path: start !== undefined ? 'start' : 'end', message: 'the start must be before the end' })
  if (issues.length > 0) throw invalidParameters(issues)
  return { from: from!, to: to!, timezone }
}

/** The last row of a page: the keyset position the next page starts after. */
export interface KeysetPosition {
  /** `YYYY-MM-DD hh:mm:ss.mmm`, UTC. */
  createdAt: string
  id: string
}

export interface ExportEventsRequest {
  projectId: string
  window: ExportWindow
  events: readonly string[]
  profileId?: string
  filters: readonly Filter[]
  fields: ReadonlySet<string>
  format: ExportFormatName
  /** One page (JSON); absent: every matching event (streams). */
  page?: { limit: number; offset: number; after?: KeysetPosition }
  /** A stream resumed: only the events after this one in the export's order. */
  after?: KeysetPosition
}

/** The events after `after` in the order `created_at DESC, id ASC`. */
function keysetCondition(after: KeysetPosition | undefined, params: SqlParams): string {
  if (!after) return ''
  params.values.after_at = after.createdAt
  params.values.after_id = after.id
  return `\n    AND (created_at < {after_at:${INSTANT}} OR (created_at = {after_at:${INSTANT}} AND id > {after_id:UUID}))`
}

/** The WHERE of list and count alike; the keyset position is the list's alone. */
function predicate(req: ExportEventsRequest, params: SqlParams): string {
  const conditions: string[] = []
  if (req.events.length > 0) conditions.push(`AND name IN ${params.add([...req.events], 'Array(String)')}`)
  if (req.profileId !== undefined) {
    // OpenPanel's meaning: the profile's own events and the anonymous events
    // (profile_id = device_id) of every device the profile used.
    const profile = params.add(req.profileId, 'String')
    conditions.push(
      `AND (profile_id = ${profile} OR (profile_id = device_id AND device_id IN ` +
        `(SELECT device_id FROM events WHERE project_id = {project:String} AND profile_id = ${profile})))`,
    )
  }
  const filters = compileFilters(req.filters, 'events', params, {
    project: '{project:String}',
    from: `{from:${INSTANT}}`,
    to: `{to:${INSTANT}}`,
  })
  if (filters) conditions.push(filters.trim())
  return renderSql('export_events_where', { conditions: conditions.join('\n    ') })
}

function baseParams(req: ExportEventsRequest): SqlParams {
  return new SqlParams({
    project: req.projectId,
    from: clickhouseInstant(req.window.from),
    to: clickhouseInstant(req.window.to),
  })
}

/** The events of the request, newest first, `created_at DESC, id ASC`, as output objects. */
export function exportEventsStatement(req: ExportEventsRequest): Statement {
  const params = baseParams(req)
  const chosen = FIELDS.filter((f) => req.fields.has(f.key))
  const where = predicate(req, params)
  let page = ''
  if (req.page) {
    page = `LIMIT {limit:UInt32} OFFSET {offset:UInt64}`
    params.values.limit = req.page.limit
    params.values.offset = req.page.offset
  }
  const keyset = keysetCondition(req.page?.after ?? req.after, params)
  // The key columns always: the outer sort (pages) and the cursor read them.
  const columns = new Set(['created_at', 'id', ...chosen.flatMap((f) => f.columns)])
  const joins: string[] = []
  if (chosen.some((f) => f.join === 'profile')) {
    // A page looks up only the profiles it shows; a stream joins the project's profiles.
    joins.push(
      renderSql('export_events_profiles', {
        scope: req.page ? 'AND id IN (SELECT profile_id FROM selected)' : '',
        profile_type: `'${PROFILE_OBJECT}'`,
      }),
    )
  }
  if (chosen.some((f) => f.join === 'meta')) joins.push(renderSql('export_events_meta'))

  const settings: Record<string, string | number> = {
    output_format_json_escape_forward_slashes: 0,
    // Reading in key order, ClickHouse by default buffers chunks of every part before merging
    // them: measured on 10M rows that is most of an export's memory (+130 MB against +25 MB),
    // for no gain in speed.
    read_in_order_use_buffering: 0,
    // The events side streams through the joins in its order: the (small) lookup sides are the
    // hash tables, never swapped in, and one pipeline keeps the rows in the order read.
    ...(joins.length > 0 ? { join_algorithm: 'hash', query_plan_join_swap_table: 'false', max_threads: 1 } : {}),
    // A stream's chunks are formatted blocks: 8192 rows keep each one a few MB even with
    // properties, which bounds what sits between ClickHouse and the socket (a format may say otherwise).
    ...(req.page ? {} : { max_block_size: 8192 }),
    ...EXPORT_FORMATS[req.format].settings,
  }
  return {
    name: req.page ? 'export_events_page' : 'export_events_stream',
    sql: renderSql('export_events', {
      event_columns: [...columns].join(', '),
      predicate: where + keyset,
      page,
      columns: chosen.map((f) => `${f.sql(EXPORT_FORMATS[req.format].shape)} AS ${f.key}`).join(',\n  '),
      joins: joins.join('\n'),
      // A page is at most 1001 rows: sorting them again costs nothing and does not depend on the join.
      order: req.page ? 'ORDER BY e.created_at DESC, e.id ASC' : '',
    }),
    params: params.values,
    settings,
  }
}

/**
 * How many events the list's predicate matches in all: the length of a full cursor walk; for a
 * resumed stream, what is left of it.
 */
export function exportEventsCountStatement(req: ExportEventsRequest): Statement {
  const params = baseParams(req)
  return {
    name: 'export_events_count',
    sql: renderSql('export_events_count', { predicate: predicate(req, params) + keysetCondition(req.after, params) }),
    params: params.values,
  }
}

/** Where event `id` stands in the export of `req` (no row: not one of its events). */
export function exportEventsPositionStatement(req: ExportEventsRequest, id: string): Statement {
  const params = baseParams(req)
  params.values.position_id = id
  return {
    name: 'export_events_position',
    sql: renderSql('export_events_position', { predicate: predicate(req, params) }),
    params: params.values,
  }
}
