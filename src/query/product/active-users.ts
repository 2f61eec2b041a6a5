import type { DateTime } from 'luxon'
import type { Statement } from '../../clickhouse/run.ts'
import type { SealedBuild } from '../sealed.ts'
import { renderSql } from '../sql-templates.ts'
import { clickhouseInstant, type TimeRange } from '../time-range.ts'
import { DAYS, profileDays, type FromBuild } from './sealed-product.ts'
import { allTime } from './window.ts'

export const MAX_ACTIVE_DAYS = 90

export interface ActiveUsersRequest {
  projectId: string
  range: TimeRange
  days: number
  /** Whether the window is all time: the series then starts at the first day with an event. */
  allTime: boolean
}

/** OpenPanel's label of a rolling window. */
export const activeUsersLabel = (days: number) => (days === 1 ? 'DAU' : days === 7 ? 'WAU' : days === 30 ? 'MAU' : `${days}d active`)

/** The local days the series has, and where the first one's look-back starts. */
function dayBounds(req: ActiveUsersRequest) {
  const firstDay = req.range.start.setZone(req.range.timezone).startOf('day')
  const endDay = req.range.end.setZone(req.range.timezone).minus({ milliseconds: 1 }).startOf('day').plus({ days: 1 })
  return { firstDay, endDay, earliest: firstDay.minus({ days: req.days - 1 }) }
}

function placeholders(req: ActiveUsersRequest) {
  const { firstDay, endDay, earliest } = dayBounds(req)
  return {
    earliest,
    values: {
      project: req.projectId,
      tz: req.range.timezone,
      days: req.days,
      earliest: clickhouseInstant(earliest),
      to: clickhouseInstant(req.range.end),
      first_day: firstDay.toISODate(),
      end_day: endDay.toISODate(),
    } as Record<string, unknown>,
    fill: req.allTime ? 'WITH FILL TO {end_day:Date}' : 'WITH FILL FROM {first_day:Date} TO {end_day:Date}',
  }
}

export function activeUsersStatement(req: ActiveUsersRequest): Statement {
  const { values, fill } = placeholders(req)
  return { name: 'insights_active_users', sql: renderSql('insights_active_users', { fill }), params: values }
}

/**
 * A build's series of active users for one zone and `days` (sql/schema/050_sealed_active_users.sql):
 * its key among the build's snapshots, and the statement that writes it under a stamp.
 */
export interface SealedSeries {
  key: string
  write: (stamp: number) => Statement
}
/** The stamp of the build's series as written, or undefined (then the request computes every date). */
export type SeriesStamp = (build: SealedBuild, series: SealedSeries) => number | undefined

/**
 * Active users from the sealed history, where its hours fall in whole local days of the request:
 * the dates before C's local day from the build's series where `seriesStamp` has one written, the
 * others computed here.
 */
export function sealedActiveUsers(req: ActiveUsersRequest, seriesStamp?: SeriesStamp): FromBuild {
  const whole = fromBuildDays(req)
  if (!whole) return undefined
  return (build) => {
    const cut = build.closedAt.setZone(req.range.timezone).startOf('day')
    const series = dayBounds(req).firstDay < cut ? seriesOf(req, build, cut) : undefined
    const stamp = series && seriesStamp?.(build, series)
    return stamp === undefined ? whole(build) : fromSeries(req, build, stamp, cut)
  }
}

/** Every date of the request from the build's day bitmaps, in date order (`fill`: as the route fills gaps, or not at all). */
function fromBuildDays(req: ActiveUsersRequest, filled = true): FromBuild {
  const { values, fill, earliest } = placeholders(req)
  const days = profileDays(req.projectId, req.range.timezone, earliest, req.range.end, DAYS, false)
  return days && ((build) => {
    const { params, fragments } = days(build)
    return {
      name: 'insights_active_users_sealed',
      sql: renderSql('insights_active_users_sealed', { ...fragments, fill: filled ? fill : '' }),
      params: { ...values, ...params, earliest_day: earliest.toISODate(), lag: req.days - 1 },
    }
  })
}

/**
 * The series of every date before `cut` in the request's zone, from the sealed days alone: all time
 * up to `cut`, which lies at or before C, so that nothing after C enters it. None where the zone's
 * midnights were not always UTC hours (Caracas until 2016): its days before the window have no
 * rollups to come from.
 */
function seriesOf(req: ActiveUsersRequest, build: SealedBuild, cut: DateTime): SealedSeries | undefined {
  const sealedOnly = { ...req, range: { ...allTime(new Date(0), req.range.timezone), end: cut }, allTime: true }
  const all = fromBuildDays(sealedOnly, false)
  return (
    all && {
      key: `active_users ${req.range.timezone} ${req.days}`,
      write: (stamp) => {
        const series = all({ ...build, liveStamp: undefined })
        return { name: 'sealed_active_users_write', sql: renderSql('sealed_active_users_write', { series: series.sql }), params: { ...series.params, stamp } }
      },
    }
  )
}

/**
 * The dates before `cut` from the series under `stamp`, and the later ones (one or two: C is at most
 * a few hours old) each as the union of its window's days.
 */
function fromSeries(req: ActiveUsersRequest, build: SealedBuild, stamp: number, cut: DateTime): Statement {
  const { values, fill } = placeholders(req)
  const { firstDay, endDay } = dayBounds(req)
  const tailFrom = cut < firstDay ? firstDay : cut > endDay ? endDay : cut
  // The window of the last date when no date is computed: the earliest read must not pass the end.
  const lastDay = endDay.minus({ days: 1 })
  const earliest = (tailFrom < lastDay ? tailFrom : lastDay).minus({ days: req.days - 1 })
  const days = profileDays(req.projectId, req.range.timezone, earliest, req.range.end, DAYS, false)!
  const { params, fragments } = days(build)
  return {
    name: 'insights_active_users_series',
    sql: renderSql('insights_active_users_series', { ...fragments, fill }),
    params: { ...values, ...params, series: stamp, tail_from: tailFrom.toISODate() },
  }
}

export const assembleActiveUsers = (rows: readonly { date: string; users: number }[], days: number) => ({
  window_days: days,
  label: activeUsersLabel(days),
  series: rows.map((r) => ({ date: r.date, users: Number(r.users) })),
})
