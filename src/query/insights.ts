import type { DateTime } from 'luxon'
import type { Statement } from '../clickhouse/run.ts'
import type { Dimension } from './dimensions.ts'
import { compileFilters, UNINDEXED_SETS, type Filter, type FilterContext } from './filters.ts'
import { SqlParams } from './sql-params.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant, type Interval, type TimeRange } from './time-range.ts'

const INSTANT = "DateTime64(3, 'UTC')"

/** Filter subqueries bound to a statement's `{from}` and `{to}`: the window itself. */
export const WINDOW_CONTEXT: FilterContext = { project: '{project:String}', from: `{from:${INSTANT}}`, to: `{to:${INSTANT}}` }

/** Placeholders every insights statement binds: the project and the window. */
export function windowPlaceholders(projectId: string, range: TimeRange, earliest: DateTime = range.start) {
  const params = new SqlParams({
    project: projectId,
    from: clickhouseInstant(range.start),
    to: clickhouseInstant(range.end),
    earliest: clickhouseInstant(earliest),
  })
  const ctx = { project: '{project:String}', from: `{earliest:${INSTANT}}`, to: `{to:${INSTANT}}` }
  return { params, ctx }
}

/** Unix seconds of the bucket's start, in the request's timezone (an allow-listed expression). */
export function bucketExpression(interval: Interval, tz: string): string {
  switch (interval) {
    case 'minute':
      return 'toUnixTimestamp(toStartOfMinute(created_at))'
    case 'hour':
      return `toUnixTimestamp(toStartOfHour(created_at, ${tz}))`
    case 'day':
      return `toUnixTimestamp(toStartOfDay(created_at, ${tz}))`
    case 'week':
      return `toUnixTimestamp(toDateTime(toMonday(created_at, ${tz}), ${tz}))`
    case 'month':
      return `toUnixTimestamp(toDateTime(toStartOfMonth(created_at, ${tz}), ${tz}))`
  }
}

export function liveStatement(projectId: string, now: DateTime): Statement {
  return {
    name: 'insights_live',
    sql: renderSql('insights_live'),
    params: { project: projectId, now: clickhouseInstant(now) },
  }
}

export interface PageRequest {
  projectId: string
  range: TimeRange
  filters: readonly Filter[]
  limit: number
  offset: number
}

export function breakdownStatement(dimension: Dimension, req: PageRequest): Statement {
  const { params, ctx } = windowPlaceholders(req.projectId, req.range)
  params.values.limit = req.limit
  params.values.offset = req.offset
  return {
    name: `insights_breakdown:${dimension.name}`,
    sql: renderSql('insights_breakdown', {
      column: dimension.column,
      prefix: dimension.prefix ? `nullIf(${dimension.prefix}, '')` : 'NULL',
      session_filters: compileFilters(req.filters, 'sessions', params, ctx),
    }),
    params: params.values,
  }
}

export function pagesStatement(req: PageRequest): Statement {
  const { params, ctx } = windowPlaceholders(req.projectId, req.range)
  params.values.limit = req.limit
  params.values.offset = req.offset
  // session_timeline carries no event attributes: filters pick the matching views' ids in events.
  const matching = compileFilters(req.filters, 'pageViews', params, ctx)
  const viewFilters = matching
    ? ` AND id IN (SELECT id FROM events WHERE project_id = ${ctx.project} AND name = 'screen_view'` +
      ` AND created_at >= ${ctx.from} AND created_at < ${ctx.to}${matching})`
    : ''
  return {
    name: 'insights_pages',
    sql: renderSql('insights_pages', {
      view_filters: viewFilters,
      session_filters: compileFilters(req.filters, 'sessions', params, ctx),
    }),
    params: params.values,
    settings: { join_use_nulls: 1, ...(req.filters.length > 0 ? UNINDEXED_SETS : {}) },
  }
}
