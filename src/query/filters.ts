import { DateTime } from 'luxon'
import { invalidParameters, type ErrorDetail } from './errors.ts'
import { SESSION_FILTER_COLUMNS } from './dimensions.ts'
import { eventColumnNames, findEventColumn, UTM_FIELDS, utmPropertyKey, type ColumnKind } from './event-columns.ts'
import { groupFilterOperand } from './group-filters.ts'
import { HAS_PROFILE, hasProfilePredicate, profileCondition, resolveProfileField } from './profile-filters.ts'
import { WILDCARD_VALUE, wildcardProperty } from './property-wildcards.ts'
import { SqlParams } from './sql-params.ts'
import { clickhouseInstant } from './time-range.ts'

export const OPERATORS = [
  'is',
  'isNot',
  'contains',
  'doesNotContain',
  'startsWith',
  'endsWith',
  'regex',
  'isNull',
  'isNotNull',
  'gt',
  'lt',
  'gte',
  'lte',
] as const
export type Operator = (typeof OPERATORS)[number]

export const MAX_FILTERS = 20
export const MAX_FILTER_VALUES = 100

/** One filter of a request; the routes' zod schema (routes/params.ts) validates its shape. */
export interface Filter {
  name: string
  operator: Operator
  /** A null means the text 'null', as OpenPanel reads every value (String(v)). */
  value: (string | number | boolean | null)[]
  /** Sent by OpenPanel clients; ignored. */
  id?: string
}

/**
 * Where the filtered rows come from:
 * - `sessions`: rows of `sessions`; session attributes match directly, event attributes keep
 *   the sessions with at least one matching event;
 * - `pageViews`: rows of `events`; event attributes match the row, session attributes keep the
 *   rows whose session matches;
 * - `events`: rows of `events`; every name is the event's own value.
 */
export type FilterScope = 'sessions' | 'pageViews' | 'events'

/** The bound placeholders the subqueries need to stay inside the project and the window. */
export interface FilterContext {
  project: string
  from: string
  to: string
  /**
   * The sessions with a matching event another way than the events' scan from `from`: the condition
   * for an event filter's predicate on a plain event column, or undefined where it has none.
   */
  eventSessions?: (predicate: string, column: string) => string | undefined
  /** The rows name their session by `session_key`, the hash of its id (the sealed sessions), not by `id`. */
  sessionKeys?: boolean
}

interface Operand {
  expr: string
  kind: ColumnKind | 'float32'
  /** Turns the predicate on `expr` into one on the event (group.*: on one of the event's groups). */
  wrap?: (sql: string, project: string) => string
  /** `profile`: compared on the profiles row of the event's or session's profile_id. */
  level: 'session' | 'event' | 'profile'
  /** The event column `expr` is, when it is one as it stands. */
  column?: string
}

const FLOAT32_COLUMNS = new Set(eventColumnNames((c) => c.float32))
const NULLABLE_COLUMNS = new Set(eventColumnNames((c) => c.nullable))

function resolve(name: string, scope: FilterScope, params: SqlParams): Operand | undefined {
  const profileField = resolveProfileField(name, params)
  if (profileField) return { ...profileField, level: 'profile' }
  const group = groupFilterOperand(name, params)
  if (group) return { ...group, kind: 'string', level: 'event' }
  const wildcard = wildcardProperty(name, params)
  if (wildcard) return { expr: WILDCARD_VALUE, kind: 'string', level: 'event', wrap: wildcard }
  if (name.startsWith('properties.') && name.length > 'properties.'.length) {
    return { expr: `properties[${params.add(name.slice('properties.'.length), 'String')}]`, kind: 'string', level: 'event' }
  }
  const column = findEventColumn(name)
  // OpenPanel's camelCase aliases (referrerName) mean exactly what their column names mean.
  const canonical = column?.column ?? name
  if (scope !== 'events' && SESSION_FILTER_COLUMNS.has(canonical)) return { expr: canonical, kind: 'string', level: 'session' }
  if ((UTM_FIELDS as readonly string[]).includes(name)) {
    return { expr: `properties[${params.add(utmPropertyKey(name), 'String')}]`, kind: 'string', level: 'event' }
  }
  if (!column) return undefined
  const kind = FLOAT32_COLUMNS.has(column.column) ? 'float32' : column.kind
  return { expr: column.column, kind, level: 'event', column: column.column }
}

/**
 * What a filter name compares, as /pages reads it: a session attribute (with its sessions column),
 * an event attribute (with its event column when it is one as it stands), a profile's; undefined for
 * no such name.
 */
export function filterTarget(name: string): { level: Operand['level']; column?: string } | undefined {
  const operand = resolve(name, 'pageViews', new SqlParams())
  if (operand?.level === 'session') return { level: 'session', column: operand.expr }
  return operand && { level: operand.level, ...(operand.column && !operand.wrap ? { column: operand.column } : {}) }
}

const isNumeric = (v: string | number | boolean | null) => typeof v === 'number' || (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)))

function parseInstant(v: string | number | boolean | null): string | undefined {
  if (typeof v !== 'string') return undefined
  const t = DateTime.fromISO(v.trim().replace(' ', 'T'), { zone: 'UTC' })
  return t.isValid ? clickhouseInstant(t) : undefined
}

const unslashed = (pattern: string) => pattern.replace(/^\//, '').replace(/\/$/, '')

function predicate(op: Operand, f: Filter, params: SqlParams, path: string, issues: ErrorDetail[]): string | undefined {
  const text = op.kind === 'string' ? op.expr : `toString(${op.expr})`
  const strings = f.value.map(String)
  const orEach = (build: (placeholder: string) => string, type: string, values: unknown[]) =>
    `(${values.map((v) => build(params.add(v, type))).join(' OR ')})`

  switch (f.operator) {
    case 'isNull':
      return op.kind === 'string' ? `${op.expr} = ''` : NULLABLE_COLUMNS.has(op.expr) ? `${op.expr} IS NULL` : '0'
    case 'isNotNull':
      return op.kind === 'string' ? `${op.expr} != ''` : NULLABLE_COLUMNS.has(op.expr) ? `${op.expr} IS NOT NULL` : '1'
    // Every string contains '', the empty one too (multiSearchAny finds nothing in an empty haystack).
    case 'contains':
      return strings.includes('') ? '1' : `multiSearchAny(${text}, ${params.add(strings, 'Array(String)')})`
    case 'doesNotContain':
      return strings.includes('') ? '0' : `NOT multiSearchAny(${text}, ${params.add(strings, 'Array(String)')})`
    case 'startsWith':
      return orEach((p) => `startsWith(${text}, ${p})`, 'String', strings)
    case 'endsWith':
      return orEach((p) => `endsWith(${text}, ${p})`, 'String', strings)
    case 'regex':
      // OpenPanel's convention: a pattern on a column may be written /…/ (its slashes are not part of
      // it); one on a property is taken as written.
      return orEach((p) => `match(${text}, ${p})`, 'String', op.expr.startsWith('properties[') || op.expr === WILDCARD_VALUE ? strings : strings.map(unslashed))
    case 'is':
    case 'isNot': {
      const negate = f.operator === 'isNot' ? 'NOT ' : ''
      if (op.kind === 'number' || op.kind === 'float32') {
        if (!f.value.every(isNumeric)) {
          issues.push({ path, message: `${f.name} is numeric; every value must be a number` })
          return undefined
        }
        const type = op.kind === 'float32' ? 'Array(Float32)' : 'Array(Float64)'
        return `${op.expr} ${negate}IN ${params.add(f.value.map(Number), type)}`
      }
      if (op.kind === 'datetime') {
        const instants = f.value.map(parseInstant)
        if (instants.some((v) => v === undefined)) {
          issues.push({ path, message: `${f.name} is a date-time; every value must be ISO 8601` })
          return undefined
        }
        return `${op.expr} ${negate}IN ${params.add(instants, "Array(DateTime64(3, 'UTC'))")}`
      }
      return `${text} ${negate}IN ${params.add(strings, 'Array(String)')}`
    }
    case 'gt':
    case 'lt':
    case 'gte':
    case 'lte': {
      const sign = { gt: '>', lt: '<', gte: '>=', lte: '<=' }[f.operator]
      if (op.kind === 'datetime') {
        const instants = f.value.map(parseInstant)
        if (instants.some((v) => v === undefined)) {
          issues.push({ path, message: `${f.name} is a date-time; every value must be ISO 8601` })
          return undefined
        }
        return orEach((p) => `${op.expr} ${sign} ${p}`, "DateTime64(3, 'UTC')", instants)
      }
      if (!f.value.every(isNumeric)) {
        issues.push({ path, message: `${f.operator} compares numbers; every value must be a number` })
        return undefined
      }
      const left = op.kind === 'number' || op.kind === 'float32' ? op.expr : `toFloat64OrNull(${text})`
      return orEach((p) => `${left} ${sign} ${p}`, 'Float64', f.value.map(Number))
    }
  }
}

/**
 * Compiles filters to ` AND …` conditions for the scope's rows. Every value becomes a query
 * parameter; only column names from the allow-lists reach the SQL text.
 */
export function compileFilters(filters: readonly Filter[], scope: FilterScope, params: SqlParams, ctx: FilterContext): string {
  const issues: ErrorDetail[] = []
  const direct: string[] = []
  const sessionLevel: string[] = []
  const eventLevel: { sql: string; column?: string }[] = []
  filters.forEach((f, i) => {
    const path = `filters.${i}`
    const needsValues = f.operator !== 'isNull' && f.operator !== 'isNotNull'
    // OpenPanel treats an empty value list as "no filter"; its clients rely on that.
    if (needsValues && f.value.length === 0) return
    if (f.name === HAS_PROFILE) {
      const sql = hasProfilePredicate(f.operator, f.value, path, issues)
      if (sql !== undefined) (scope === 'sessions' ? eventLevel.push({ sql }) : direct.push(sql))
      return
    }
    const operand = resolve(f.name, scope, params)
    if (!operand) {
      issues.push({ path: `${path}.name`, message: `unknown filter name "${f.name}"` })
      return
    }
    const matched = predicate(operand, f, params, `${path}.value`, issues)
    if (matched === undefined) return
    const sql = operand.wrap ? operand.wrap(matched, ctx.project) : matched
    // On sessions a profile filter is an event attribute: the sessions with an event of a matching profile.
    if (operand.level === 'profile') {
      const condition = profileCondition(sql, ctx.project)
      if (scope === 'sessions') eventLevel.push({ sql: condition })
      else direct.push(condition)
    } else if (scope === 'sessions' && operand.level === 'event') eventLevel.push({ sql, ...(operand.column ? { column: operand.column } : {}) })
    else if (scope === 'pageViews' && operand.level === 'session') sessionLevel.push(sql)
    else direct.push(sql)
  })
  if (issues.length > 0) throw invalidParameters(issues)

  const parts = direct.map((sql) => `(${sql})`)
  // Each event filter keeps the sessions with at least one matching event of their own.
  for (const { sql, column } of eventLevel) {
    parts.push(
      (column && ctx.eventSessions?.(sql, column)) ??
        (ctx.sessionKeys
          ? `session_key IN (SELECT reinterpretAsUInt128(sipHash128(session_id)) FROM events WHERE project_id = ${ctx.project} AND created_at >= ${ctx.from} AND (${sql}))`
          : `id IN (SELECT session_id FROM events WHERE project_id = ${ctx.project} AND created_at >= ${ctx.from} AND (${sql}))`),
    )
  }
  if (sessionLevel.length > 0) {
    parts.push(
      `session_id IN (SELECT id FROM sessions FINAL WHERE project_id = ${ctx.project} AND ended_at >= ${ctx.from} ` +
        `AND created_at < ${ctx.to} AND ${sessionLevel.map((s) => `(${s})`).join(' AND ')})`,
    )
  }
  return parts.map((p) => ` AND ${p}`).join('')
}

/**
 * Settings for a statement whose filters' `IN (SELECT …)` sets test columns that no primary key of
 * the tables read begins with (session ids on events, view ids on session_timeline, any column of
 * the sealed tables): preparing such a set for the index only costs. On L, 30d (load 1–6): the
 * sealed /metrics' revenue set with a country filter 6.0 s of CPU against 1.2 without; a sealed
 * breakdown with a `path` filter 4.5 s against 3.1; /pages from the events with a country filter
 * 5.9–7.4 s against 3.7–5.2 (three runs), with a browser and an event name 3.6 against 1.1, with a
 * `path` filter the same.
 */
export const UNINDEXED_SETS = { use_index_for_in_with_subqueries: 0 } as const
