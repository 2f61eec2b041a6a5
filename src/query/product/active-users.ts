import type { Statement } from '../../clickhouse/run.ts'
import { renderSql } from '../sql-templates.ts'
import { clickhouseInstant, type TimeRange } from '../time-range.ts'
import { DAYS, profileDays, type FromBuild } from './sealed-product.ts'

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

/** Active users from the sealed history, where its hours fall in whole local days of the request. */
export function sealedActiveUsers(req: ActiveUsersRequest): FromBuild {
  const { values, fill, earliest } = placeholders(req)
  const days = profileDays(req.projectId, req.range.timezone, earliest, req.range.end, DAYS, false)
  if (!days) return undefined
  return (build) => {
    const { params, fragments } = days(build)
    return {
      name: 'insights_active_users_sealed',
      sql: renderSql('insights_active_users_sealed', { ...fragments, fill }),
      params: { ...values, ...params, earliest_day: earliest.toISODate(), lag: req.days - 1 },
    }
  }
}

export const assembleActiveUsers = (rows: readonly { date: string; users: number }[], days: number) => ({
  window_days: days,
  label: activeUsersLabel(days),
  series: rows.map((r) => ({ date: r.date, users: Number(r.users) })),
})
