import { DateTime } from 'luxon'
import type { Statement } from '../../clickhouse/run.ts'
import { HOUR_MS, onUtcHour, wholePeriods, type SealedBuild } from '../sealed.ts'
import { renderSql } from '../sql-templates.ts'
import { clickhouseInstant } from '../time-range.ts'
import type { RetentionRequest } from './retention.ts'

/**
 * Retention, cohorts and engagement from the profile rollups of the sealed history
 * (sql/schema/022_product_days.sql, sql/queries/_profile_days.sql): the same rows as their
 * statements over the events, for requests without filters whose days are whole local days made
 * of whole UTC hours. Each function answers undefined for a request it cannot answer, else the
 * statement for a build.
 */

/**
 * Whether every local midnight from `from` to `to` is a UTC hour, so that each sealed hour lies in
 * one local day: true for zones whose offsets are whole hours (sampled monthly, where DST moves
 * them), false for India, Nepal, Newfoundland and the like.
 */
export function daysOnUtcHours(from: DateTime, to: DateTime): boolean {
  if (!onUtcHour(from)) return false
  for (let t = from; t < to; t = t.plus({ months: 1 })) if (t.offset % 60 !== 0) return false
  return to.offset % 60 === 0
}

const isMidnight = (t: DateTime, timezone: string) => +t.setZone(timezone).startOf('day') === +t

/** What _profile_days.sql groups by: local days, or local weeks (Monday), where whole UTC days can stand for more of them. */
export const DAYS = { bucket: 'toDate' }
const WEEKS = { bucket: 'toMonday' }

/** A statement's placeholders and fragments for _profile_days.sql, given a build. */
export type ProfileDays = (build: SealedBuild) => { params: Record<string, unknown>; fragments: Record<string, string> }

/**
 * _profile_days.sql for activity read over [earliest, to), grouped by `unit`. Its profiles outside
 * the sealed hours come from the snapshot of the events after C where the planner wrote one and
 * they all lie from C on (the sealed hours run from {earliest} to C, or there are none and the
 * window starts at C or later), else from the events.
 */
export function profileDays(projectId: string, timezone: string, earliest: DateTime, to: DateTime, unit: typeof DAYS, identified = true): ProfileDays | undefined {
  if (!isMidnight(earliest, timezone) || !daysOnUtcHours(earliest, to)) return undefined
  return (build) => {
    const hours = wholePeriods(earliest, to < build.closedAt ? to : build.closedAt, HOUR_MS)
    const snapshot = build.liveStamp !== undefined && +hours.to >= +build.closedAt
    return {
      params: {
        project: projectId,
        identified,
        version: build.version,
        tz: timezone,
        earliest: clickhouseInstant(earliest),
        to: clickhouseInstant(to),
        hours_from: clickhouseInstant(hours.from),
        hours_to: clickhouseInstant(hours.to),
        ...(snapshot ? { stamp: build.liveStamp } : {}),
      },
      fragments: { ...unit, numbered: renderSql(snapshot ? '_profile_numbered_snapshot' : '_profile_numbered', unit) },
    }
  }
}

const sealedOnly = (req: RetentionRequest) => req.filters.length === 0 && isMidnight(req.range.end, req.range.timezone)

/** A statement from the build that the request's days allow, or undefined where they do not. */
export type FromBuild = ((build: SealedBuild) => Statement) | undefined

export function sealedRetention(req: RetentionRequest): FromBuild {
  if (!sealedOnly(req)) return undefined
  const days = profileDays(req.projectId, req.range.timezone, req.range.start, req.range.end, WEEKS)
  return days && ((build) => {
    const { params, fragments } = days(build)
    return { name: 'insights_retention_sealed', sql: renderSql('insights_retention_sealed', fragments), params }
  })
}

/**
 * Cohorts from the sealed history, for windows whose weeks hold nothing from after the window:
 * ending on a Monday, or at or after `now` (the default window ends at the coming midnight).
 */
export function sealedCohort(req: RetentionRequest, columns: number, now: Date): FromBuild {
  const end = req.range.end.setZone(req.range.timezone)
  if (!sealedOnly(req) || (end.weekday !== 1 && +end < +now)) return undefined
  const days = profileDays(req.projectId, req.range.timezone, req.range.start, end.plus({ weeks: columns }), WEEKS)
  const toWeek = end.minus({ milliseconds: 1 }).startOf('week').plus({ weeks: 1 }).toISODate()
  return days && ((build) => {
    const { params, fragments } = days(build)
    return { name: 'insights_retention_cohort_sealed', sql: renderSql('insights_retention_cohort_sealed', fragments), params: { ...params, columns, to_week: toWeek } }
  })
}

/** Engagement reads every event, future-dated ones too (they count as active, as in OpenPanel). */
const FOREVER = '2100-01-01'

export function sealedEngagement(projectId: string, timezone: string, now: Date): FromBuild {
  const days = profileDays(projectId, timezone, DateTime.fromISO('1970-01-01', { zone: timezone }), DateTime.fromISO(FOREVER, { zone: timezone }), DAYS)
  const today = DateTime.fromJSDate(now, { zone: timezone }).toISODate()
  return days && ((build) => {
    const { params, fragments } = days(build)
    return { name: 'insights_engagement_sealed', sql: renderSql('insights_engagement_sealed', fragments), params: { ...params, today } }
  })
}

/** Writes the profiles of the events after C for one state of them (sql/schema/024_sealed_live_profiles.sql), beside the live sessions. */
export const sealedLiveProfilesWriteStatement = (projectId: string, build: SealedBuild, stamp: number): Statement => ({
  name: 'sealed_live_profiles_write',
  sql: renderSql('sealed_live_profiles_write'),
  params: { project: projectId, version: build.version, stamp, closed: clickhouseInstant(build.closedAt) },
})
