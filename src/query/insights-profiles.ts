import type { DateTime } from 'luxon'
import type { Statement } from '../clickhouse/run.ts'
import { InvalidInput, invalidParameters } from './errors.ts'
import { compileFilters, type Filter, type FilterContext } from './filters.ts'
import { windowPlaceholders } from './insights.ts'
import { compileSessionFilters, isSessionFilter } from './session-filters.ts'
import { SqlParams } from './sql-params.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant, type TimeRange } from './time-range.ts'

export const MAX_SEARCH_TOKENS = 5
/** The profile properties OpenPanel's exact-match parameters of /profiles compare (copied there by its ingestion). */
export const PROFILE_PROPERTY_PARAMS = ['country', 'city', 'device', 'browser'] as const

export interface ProfilesRequest {
  projectId: string
  /** Whitespace-separated words; each must occur (case-insensitively) in the id, email, first or last name. */
  name?: string
  email?: string
  properties: Partial<Record<(typeof PROFILE_PROPERTY_PARAMS)[number], string>>
  /** No event of the profile since this instant. */
  inactiveSince?: DateTime
  minSessions?: number
  performedEvent?: string
  /** profile.* filters only. */
  filters: readonly Filter[]
  order: 'asc' | 'desc'
  limit: number
}

const contains = (column: string, placeholder: string) => `positionCaseInsensitiveUTF8(${column}, ${placeholder}) > 0`

/** Stored profiles by first seen; every condition is a bound value, `%` and `_` literal. */
export function profilesStatement(req: ProfilesRequest): Statement {
  const params = new SqlParams({ project: req.projectId, limit: req.limit })
  const conditions: string[] = []
  const tokens = (req.name ?? '').split(/\s+/).filter((t) => t.length > 0)
  if (tokens.length > MAX_SEARCH_TOKENS) throw invalidParameters([{ path: 'name', message: `at most ${MAX_SEARCH_TOKENS} words` }])
  for (const token of tokens) {
    const p = params.add(token, 'String')
    // A word has no space, so it cannot match across "first last": the four columns suffice.
    conditions.push(`(${['id', 'email', 'first_name', 'last_name'].map((c) => contains(c, p)).join(' OR ')})`)
  }
  if (req.email !== undefined) conditions.push(contains('email', params.add(req.email, 'String')))
  for (const [key, value] of Object.entries(req.properties)) {
    if (value !== undefined) conditions.push(`properties[${params.add(key, 'String')}] = ${params.add(value, 'String')}`)
  }
  const ownEvents = 'SELECT profile_id FROM events WHERE project_id = {project:String}'
  if (req.inactiveSince) {
    conditions.push(`id NOT IN (${ownEvents} AND created_at >= ${params.add(clickhouseInstant(req.inactiveSince), "DateTime64(3, 'UTC')")})`)
  }
  if (req.minSessions !== undefined) {
    conditions.push(
      `id IN (${ownEvents} AND session_id != '' GROUP BY profile_id HAVING uniqExact(session_id) >= ${params.add(req.minSessions, 'UInt32')})`,
    )
  }
  if (req.performedEvent !== undefined) conditions.push(`id IN (${ownEvents} AND name = ${params.add(req.performedEvent, 'String')})`)
  const notProfile = req.filters.findIndex((f) => !f.name.startsWith('profile.'))
  if (notProfile >= 0) {
    throw invalidParameters([{ path: `filters.${notProfile}.name`, message: 'profiles take profile.<column> and profile.properties.<key> filters' }])
  }
  // The compiled filters compare a profile_id with the stored profiles: here, each row's own id.
  const filters = compileFilters(req.filters, 'events', params, { project: '{project:String}', from: '', to: '' })
  if (filters) conditions.push(`id IN (SELECT profile_id FROM (SELECT id AS profile_id FROM profiles FINAL WHERE project_id = {project:String}) WHERE 1${filters})`)
  return {
    name: 'insights_profiles',
    sql: renderSql('insights_profiles', {
      conditions: conditions.map((c) => `AND ${c}`).join('\n  '),
      direction: req.order === 'asc' ? 'ASC' : 'DESC',
    }),
    params: params.values,
  }
}

export function profileStatement(projectId: string, profileId: string): Statement {
  return { name: 'insights_profile', sql: renderSql('insights_profile'), params: { project: projectId, profile: profileId } }
}

export function profileEventsStatement(projectId: string, profileId: string, limit: number): Statement {
  return { name: 'insights_profile_events', sql: renderSql('insights_profile_events'), params: { project: projectId, profile: profileId, limit } }
}

export function profileSessionsStatement(projectId: string, profileId: string, limit: number): Statement {
  return { name: 'insights_profile_sessions', sql: renderSql('insights_profile_sessions'), params: { project: projectId, profile: profileId, limit } }
}

export function profileMetricsStatement(projectId: string, profileId: string, timezone: string): Statement {
  return { name: 'insights_profile_metrics', sql: renderSql('insights_profile_metrics'), params: { project: projectId, profile: profileId, tz: timezone } }
}

export interface SessionsRequest {
  projectId: string
  range: TimeRange
  /** The exact-match parameters as filters (exactMatchFilters). */
  exact: readonly Filter[]
  filters: readonly Filter[]
  limit: number
}

/** compileFilters over some of the request's filters, its 400s naming each by its index in the request. */
function compileSubset(subset: readonly (readonly [Filter, number])[], params: SqlParams, ctx: FilterContext): string {
  try {
    return compileFilters(subset.map(([f]) => f), 'sessions', params, ctx)
  } catch (err) {
    if (!(err instanceof InvalidInput)) throw err
    throw invalidParameters(err.details.map((d) => ({ ...d, path: d.path.replace(/^filters\.(\d+)/, (_, i: string) => `filters.${subset[Number(i)]![1]}`) })))
  }
}

/**
 * Sessions begun in the window, newest first; filters as on insights (session attributes, events,
 * profiles), and OpenPanel's session.* filters on the session's own figures.
 */
export function sessionsStatement(req: SessionsRequest): Statement {
  const { params, ctx } = windowPlaceholders(req.projectId, req.range)
  params.values.limit = req.limit
  const indexed = req.filters.map((f, i) => [f, i] as const)
  const conditions =
    compileFilters(req.exact, 'sessions', params, ctx) +
    compileSubset(indexed.filter(([f]) => !isSessionFilter(f)), params, ctx) +
    compileSessionFilters(indexed.filter(([f]) => isSessionFilter(f)), params, ctx)
  return { name: 'insights_sessions', sql: renderSql('insights_sessions', { conditions }), params: params.values }
}

/** What insights_profile_metrics answers. */
export interface ProfileMetricsRow {
  total_events: number
  screen_views: number
  conversion_events: number
  days_active: number
  revenue: number
  sessions: number
  bounces: number
  duration_ms: number
  p90_duration_ms: number
  first_to_last_ms: number
  first_seen: string
  last_seen: string
  stored: number
}

const round = (value: number, digits: number) => Number(value.toFixed(digits))
/** `YYYY-MM-DD hh:mm:ss.mmm` (UTC) as ISO 8601; null for no stored row. */
const isoOrNull = (text: string, stored: boolean) => (stored ? `${text.replace(' ', 'T')}Z` : null)

/** What a profile without any activity or row has; the statement answers it too, a dry run (explain=sql) answers nothing. */
const NO_ACTIVITY: ProfileMetricsRow = {
  total_events: 0,
  screen_views: 0,
  conversion_events: 0,
  days_active: 0,
  revenue: 0,
  sessions: 0,
  bounces: 0,
  duration_ms: 0,
  p90_duration_ms: 0,
  first_to_last_ms: 0,
  first_seen: '',
  last_seen: '',
  stored: 0,
}

/** OpenPanel's profile metrics object from the statement's one row. */
export function assembleProfileMetrics(profileId: string, answered: ProfileMetricsRow | undefined) {
  const row = answered ?? NO_ACTIVITY
  const stored = row.stored > 0
  const perSession = (value: number, digits: number) => (row.sessions > 0 ? round(value / row.sessions, digits) : null)
  return {
    profileId,
    firstSeen: isoOrNull(row.first_seen, stored),
    lastSeen: isoOrNull(row.last_seen, stored),
    sessions: row.sessions,
    screenViews: row.screen_views,
    totalEvents: row.total_events,
    conversionEvents: row.conversion_events,
    uniqueDaysActive: row.days_active,
    avgSessionDurationMin: perSession(row.duration_ms / 60_000, 2),
    p90SessionDurationMin: row.sessions > 0 ? round(row.p90_duration_ms / 60_000, 2) : null,
    avgEventsPerSession: perSession(row.total_events, 2),
    // The mean gap between consecutive session starts: the gaps add up to last start − first start.
    avgTimeBetweenSessionsSec: row.sessions > 1 ? round(row.first_to_last_ms / 1000 / (row.sessions - 1), 1) : 0,
    bounceRate: perSession(row.bounces * 100, 4),
    revenue: row.revenue,
  }
}
