import type { ErrorDetail } from './errors.ts'
import type { SqlParams } from './sql-params.ts'

/**
 * OpenPanel's filter names about the person behind an event: `profile.<column>`,
 * `profile.properties.<key>` (compared on the `profiles` row of the event's profile_id) and
 * `has_profile` (identified or anonymous).
 */
export const HAS_PROFILE = 'has_profile'

const PROFILE_PREFIX = 'profile.'
const PROPERTIES_PREFIX = 'profile.properties.'

type ProfileKind = 'string' | 'datetime'

/** The `profiles` columns a filter may name, by OpenPanel's column names and camelCase aliases. */
const PROFILE_COLUMNS: Readonly<Record<string, { expr: string; kind: ProfileKind }>> = (() => {
  const columns: [string, string, ProfileKind, string?][] = [
    ['id', 'id', 'string'],
    ['first_name', 'first_name', 'string', 'firstName'],
    ['last_name', 'last_name', 'string', 'lastName'],
    ['email', 'email', 'string'],
    ['avatar', 'avatar', 'string'],
    // 'true' or 'false', as OpenPanel's clients write a boolean in a filter value.
    ['is_external', 'toString(is_external)', 'string', 'isExternal'],
    ['created_at', 'created_at', 'datetime', 'createdAt'],
    ['last_seen_at', 'last_seen_at', 'datetime', 'lastSeenAt'],
  ]
  const out: Record<string, { expr: string; kind: ProfileKind }> = {}
  for (const [name, expr, kind, alias] of columns) {
    out[name] = { expr, kind }
    if (alias) out[alias] = { expr, kind }
  }
  return out
})()

/** The names a `profile.*` filter accepts, for documentation and error messages. */
export const PROFILE_FILTER_NAMES = [...Object.keys(PROFILE_COLUMNS).map((c) => `${PROFILE_PREFIX}${c}`), `${PROPERTIES_PREFIX}<key>`]

/** The expression a `profile.*` name compares inside the `profiles` table, or undefined for other names. */
export function resolveProfileField(name: string, params: SqlParams): { expr: string; kind: ProfileKind } | undefined {
  if (name.startsWith(PROPERTIES_PREFIX) && name.length > PROPERTIES_PREFIX.length) {
    return { expr: `properties[${params.add(name.slice(PROPERTIES_PREFIX.length), 'String')}]`, kind: 'string' }
  }
  if (!name.startsWith(PROFILE_PREFIX)) return undefined
  const column = name.slice(PROFILE_PREFIX.length)
  return Object.hasOwn(PROFILE_COLUMNS, column) ? PROFILE_COLUMNS[column] : undefined
}

/** The values a profile without a stored row compares with: OpenPanel's LEFT JOIN gives it the columns' defaults. */
const NO_PROFILE_ROW =
  "SELECT '' AS id, '' AS first_name, '' AS last_name, '' AS email, '' AS avatar, false AS is_external, " +
  "CAST(map(), 'Map(String, String)') AS properties, toDateTime64(0, 3, 'UTC') AS created_at, toDateTime64(0, 3, 'UTC') AS last_seen_at"

/**
 * The rows (events or sessions, by their profile_id) whose profile satisfies `predicate`, a
 * condition over the `profiles` columns. A profile without a row (an anonymous visitor, usually)
 * is judged on empty fields, as OpenPanel's join does: `profile.email isNull` keeps it.
 */
export function profileCondition(predicate: string, project: string): string {
  return (
    `(profile_id IN (SELECT id FROM profiles FINAL WHERE project_id = ${project} AND (${predicate}))` +
    ` OR ((SELECT count() FROM (${NO_PROFILE_ROW}) WHERE ${predicate}) = 1` +
    ` AND profile_id NOT IN (SELECT id FROM profiles FINAL WHERE project_id = ${project})))`
  )
}

/**
 * `has_profile`: `is ["true"]` keeps identified events (profile_id ≠ device_id), `is ["false"]`
 * anonymous ones; `isNot` the others. OpenPanel reads any value but 'true' as false and ignores
 * the operator; here anything else is a 400, since it could only be a mistake.
 */
export function hasProfilePredicate(
  operator: string,
  values: readonly (string | number | boolean | null)[],
  path: string,
  issues: ErrorDetail[],
): string | undefined {
  if (operator !== 'is' && operator !== 'isNot') {
    issues.push({ path: `${path}.operator`, message: 'has_profile takes is or isNot' })
    return undefined
  }
  const wanted = new Set(values.map((v) => String(v).trim()))
  if ([...wanted].some((v) => v !== 'true' && v !== 'false')) {
    issues.push({ path: `${path}.value`, message: 'has_profile takes true or false' })
    return undefined
  }
  const sql = wanted.size === 2 ? '1' : wanted.has('true') ? 'profile_id != device_id' : 'profile_id = device_id'
  return operator === 'isNot' ? `NOT (${sql})` : sql
}
