import type { SqlParams } from './sql-params.ts'

/**
 * `group.*` names, OpenPanel's mapping (its chart engine: filters and breakdowns of /export/events
 * and /export/charts): `group.name`, `group.type` and `group.properties.<key>` read the group's row
 * in `groups`; every other `group.<x>` (`group.id`) is the group id the event carries.
 */
export const GROUP_PREFIX = 'group.'

export const isGroupName = (name: string): boolean => name.startsWith(GROUP_PREFIX) && name.length > GROUP_PREFIX.length

export type GroupAttribute = { of: 'row'; expr: (table: string) => string } | { of: 'id' }

/** What a `group.*` name reads; undefined for other names. Keys become parameters. */
export function groupAttribute(name: string, params: SqlParams): GroupAttribute | undefined {
  if (!isGroupName(name)) return undefined
  const rest = name.slice(GROUP_PREFIX.length)
  if (rest === 'name' || rest === 'type') return { of: 'row', expr: (table) => `${table}${rest}` }
  if (rest.startsWith('properties.') && rest.length > 'properties.'.length) {
    const key = params.add(rest.slice('properties.'.length), 'String')
    return { of: 'row', expr: (table) => `${table}properties[${key}]` }
  }
  return { of: 'id' }
}

/** The lambda parameter standing for one of the event's group ids. */
const GROUP_ID = '_group_id'

/**
 * A filter on a group attribute, as a condition on the event: one of the event's groups matches.
 * An event without groups never matches (isNot and isNull included), as in OpenPanel; unlike its
 * ARRAY JOIN, an event in several matching groups is kept once.
 */
export function groupFilterOperand(name: string, params: SqlParams) {
  const attribute = groupAttribute(name, params)
  if (!attribute) return undefined
  if (attribute.of === 'id') {
    return { expr: GROUP_ID, wrap: (sql: string) => `arrayExists(${GROUP_ID} -> (${sql}), groups)` }
  }
  return {
    expr: attribute.expr(''),
    // The groups FINAL keeps each group's latest row, without the deleted ones.
    wrap: (sql: string, project: string) =>
      `hasAny(groups, (SELECT groupArray(id) FROM groups FINAL WHERE project_id = ${project} AND deleted = 0 AND (${sql})))`,
  }
}

/**
 * What a chart needs for a group breakdown or the group segment: each event once per group id it
 * carries (events without groups drop out, as in OpenPanel), with the group's row when there is one
 * (an id without a row reads '' for name, type and properties).
 */
export const groupJoin = (project: string) =>
  `ARRAY JOIN groups AS ${GROUP_ID}\n` +
  `LEFT ANY JOIN (SELECT id AS _g_id, name AS _g_name, type AS _g_type, properties AS _g_properties ` +
  `FROM groups FINAL WHERE project_id = ${project} AND deleted = 0) AS _g ON _g._g_id = ${GROUP_ID}`

/** A `group.*` breakdown over the rows of groupJoin; undefined for other names. */
export function groupBreakdownExpression(name: string, params: SqlParams): string | undefined {
  const attribute = groupAttribute(name, params)
  if (!attribute) return undefined
  return attribute.of === 'id' ? GROUP_ID : attribute.expr('_g_')
}

export { GROUP_ID }
