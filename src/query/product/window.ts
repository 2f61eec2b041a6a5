import { DateTime } from 'luxon'
import type { Filter } from '../filters.ts'
import { renderSql } from '../sql-templates.ts'
import { resolveRange, timezoneSpelling, type RangeInput, type RangeName, type TimeRange } from '../time-range.ts'

/** What a product-analytics route counts as one: a session, or a person (profile_id). */
export const GROUP_BYS = ['session_id', 'profile_id'] as const
export type GroupBy = (typeof GROUP_BYS)[number]

/** Where an all-time window starts (local midnight): before any event a project can hold. */
const EPOCH = '1970-01-01'

/** A route's window when none is asked for: a named range, or one computed from the clock. */
export type DefaultWindow = RangeName | ((now: Date, timezone: string) => TimeRange)

/** Whether the request names its window at all. */
export const windowGiven = (input: RangeInput) => input.range !== undefined || input.startDate !== undefined || input.endDate !== undefined

/** All time, as OpenPanel answers retention and active users: from the epoch's local midnight to the coming one. */
export const allTime = (now: Date, timezone: string): TimeRange => ({
  start: DateTime.fromISO(EPOCH, { zone: timezone }),
  end: DateTime.fromJSDate(now, { zone: timezone }).startOf('day').plus({ days: 1 }),
  timezone,
})

/** The window of a product route: as asked (a missing side from 30d), or the route's default. */
export function productRange(input: RangeInput, zone: string, now: Date, fallback: DefaultWindow): TimeRange {
  if (typeof fallback === 'string') return resolveRange(input, zone, now, fallback)
  if (windowGiven(input)) return resolveRange(input, zone, now, '30d')
  return fallback(now, timezoneSpelling(zone))
}

/** A request of the routes that read events per unit (funnel, user flow). */
export interface UnitRequest {
  projectId: string
  range: TimeRange
  filters: readonly Filter[]
  groupBy: GroupBy
}

/**
 * The unit's expression over `events AS e` and what it joins: a session is its id; a person is
 * the profile an anonymous device identified as in the window (_person_links.sql), else the profile.
 */
export function unitFragments(groupBy: GroupBy): { unit: string; links: string } {
  if (groupBy === 'session_id') return { unit: 'e.session_id', links: '' }
  return { unit: "if(e.profile_id != e.device_id OR links.person = '', e.profile_id, links.person)", links: renderSql('_person_links') }
}
