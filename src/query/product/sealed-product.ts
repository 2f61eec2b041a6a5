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

/** The placeholders of _profile_days.sql for activity read over [earliest, to), given a build. */
export function profileDays(projectId: string, timezone: string, earliest: DateTime, to: DateTime, identified = true) {
  if (!isMidnight(earliest, timezone) || !daysOnUtcHours(earliest, to)) return undefined
  return (build: SealedBuild): Record<string, unknown> => {
    const hours = wholePeriods(earliest, to < build.closedAt ? to : build.closedAt, HOUR_MS)
    return {
      project: projectId,
      identified,
      version: build.version,
      tz: timezone,
      earliest: clickhouseInstant(earliest),
      to: clickhouseInstant(to),
      hours_from: clickhouseInstant(hours.from),
      hours_to: clickhouseInstant(hours.to),
    }
  }
}

/** What _profile_days.sql groups by: local days, or local weeks (Monday), where whole UTC days can stand for more of them. */
export const DAYS = { bucket: 'toDate' }
const WEEKS = { bucket: 'toMonday' }

const sealedOnly = (req: RetentionRequest) => req.filters.length === 0 && isMidnight(req.range.end, req.range.timezone)

/** A statement from the build that the request's days allow, or undefined where they do not. */
export type FromBuild = ((build: SealedBuild) => Statement) | undefined

export function sealedRetention(req: RetentionRequest): FromBuild {
  if (!sealedOnly(req)) return undefined
  const params = profileDays(req.projectId, req.range.timezone, req.range.start, req.range.end)
  return params && ((build) => ({ name: 'insights_retention_sealed', sql: renderSql('insights_retention_sealed', WEEKS), params: params(build) }))
}

/**
 * Cohorts from the sealed history, for windows whose weeks hold nothing from after the window:
 * ending on a Monday, or at or after `now` (the default window ends at the coming midnight).
 */
export function sealedCohort(req: RetentionRequest, columns: number, now: Date): FromBuild {
  const end = req.range.end.setZone(req.range.timezone)
  if (!sealedOnly(req) || (end.weekday !== 1 && +end < +now)) return undefined
  const params = profileDays(req.projectId, req.range.timezone, req.range.start, end.plus({ weeks: columns }))
  const toWeek = end.minus({ milliseconds: 1 }).startOf('week').plus({ weeks: 1 }).toISODate()
  return params && ((build) => ({ name: 'insights_retention_cohort_sealed', sql: renderSql('insights_retention_cohort_sealed', WEEKS), params: { ...params(build), columns, to_week: toWeek } }))
}

/** Engagement reads every event, future-dated ones too (they count as active, as in OpenPanel). */
const FOREVER = '2100-01-01'

export function sealedEngagement(projectId: string, timezone: string, now: Date): FromBuild {
  const params = profileDays(projectId, timezone, DateTime.fromISO('1970-01-01', { zone: timezone }), DateTime.fromISO(FOREVER, { zone: timezone }))
  const today = DateTime.fromJSDate(now, { zone: timezone }).toISODate()
  return params && ((build) => ({ name: 'insights_engagement_sealed', sql: renderSql('insights_engagement_sealed', DAYS), params: { ...params(build), today } }))
}
