import type { DateTime } from 'luxon'
import type { Statement } from '../clickhouse/run.ts'
import { DIMENSIONS } from './dimensions.ts'
import { revenueEventFilters } from './filter-holds.ts'
import { compileFilters, UNINDEXED_SETS } from './filters.ts'
import { bucketExpression } from './insights.ts'
import { filtersPages, type MetricsRequest } from './metrics.ts'
import { earlier, holeConditions, HOUR_MS, onUtcHour, sealedPlaceholders, splitHours, wholeDays, wholePeriods, type SealedBuild } from './sealed.ts'
import { liveRows, liveSource } from './sealed-live.ts'
import { filteredRows, filtersOnPostings, filtersOnRows, sealedPageFiltering, sealedRevenueFilters, sealedSessionFilters } from './sealed-filters.ts'
import type { PostingsChoice } from './sealed-postings.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant } from './time-range.ts'

/**
 * Whether the hourly totals can stand for a /metrics window: no filters, and buckets no shorter than
 * a UTC hour's that start on one (hours that buckets or the window's start split are read from the
 * sealed sessions: splitHours).
 */
export function hourlyTotalsAnswer(req: MetricsRequest, bucketStarts: readonly DateTime[]): boolean {
  return req.filters.length === 0 && req.interval !== 'minute' && (req.interval !== 'hour' || bucketStarts.every((b) => b <= req.range.start || onUtcHour(b)))
}

/**
 * The dimension whose day rows answer a /metrics window filtered on its value or prefix alone (a
 * country's: `country is US`), when whole UTC days are the window's whole sealed part, each bucket
 * starting on a UTC midnight: the sessions from its rollups, the revenue from its revenue by day and
 * value, no sealed session read (L, 30d, `country is US`: see benchmarks/README.md).
 */
function dimensionDays(req: MetricsRequest, bucketStarts: readonly DateTime[], build: SealedBuild, earliest: DateTime) {
  const dimension = DIMENSIONS.find((d) => d.filterable && filtersOnRows(d, req.filters))
  const days = dimension && sealedDays(req, bucketStarts, build, earliest)
  return dimension && days ? { dimension, days } : undefined
}

/**
 * The whole UTC days that are all of a /metrics window's sealed part, each bucket starting on a UTC
 * midnight: C's day whole. Undefined when the days would not cover it.
 */
function sealedDays(req: MetricsRequest, bucketStarts: readonly DateTime[], build: SealedBuild, earliest: DateTime) {
  const sealed = { from: earliest, to: earlier(req.range.end, build.closedAt) }
  const days = wholeDays(req.range.start, bucketStarts, sealed, build.closedAt)
  return +days.from === +sealed.from && +days.to >= +sealed.to ? days : undefined
}

/**
 * /metrics from the sealed history. With filters all on the page (origin, path), the views and
 * revenue, the matching events' own, come from the page tables: whole UTC days of views from their
 * day rows where no bucket starts inside one. With filters all on events' names, origins and paths,
 * a sealed part of whole UTC days takes its sessions from the session days (sql/schema/044_sealed_session_days.sql).
 */
export function sealedMetricsStatement(req: MetricsRequest, bucketStarts: readonly DateTime[], build: SealedBuild, postings?: PostingsChoice): Statement {
  const earliest = req.previous?.start ?? req.range.start
  const byDimension = dimensionDays(req, bucketStarts, build, earliest)
  const rollup = byDimension
    ? byDimension.days
    : hourlyTotalsAnswer(req, bucketStarts)
      ? wholePeriods(earliest, earlier(req.range.end, build.closedAt), HOUR_MS)
      : { from: earliest, to: earliest }
  // The totals' days from their day rows, the rest from hours; a dimension's rollups have days only.
  const days = byDimension ? { from: rollup.from, to: rollup.from } : wholeDays(req.range.start, bucketStarts, rollup, build.closedAt)
  const holes = splitHours([req.range.start, ...bucketStarts], rollup)
  const { params, ctx } = sealedPlaceholders(req.projectId, req.range, build, earliest, rollup, days, byDimension ? [24, 192] : [1, 24])
  params.values.dimension = byDimension?.dimension.name ?? ''
  if (holes.length > 0) params.values.holes = holes
  const tz = params.add(req.range.timezone, 'String')
  const filters = sealedSessionFilters(req.filters, params, ctx, postings)
  const pages = filtersPages(req.filters)
  const bucket = bucketExpression(req.interval, tz)
  const split = holeConditions(holes)
  const parts = { bucket, session_filters: filters.sealed, live_filters: filters.live, session_views: pages ? 'toUInt64(0)' : 'screen_view_count', hole_sessions: split.rows }
  const eventFilters = pages ? compileFilters(req.filters, 'pageViews', params, ctx) : ''
  const sealedSessions = +rollup.from > +earliest || +rollup.to < +earlier(req.range.end, build.closedAt) || holes.length > 0
  // Filters all on posted columns pick a day's sessions by their numbers alone: from the session days.
  const sessionDays = sealedSessions && filtersOnPostings(req.filters) ? sealedDays(req, bucketStarts, build, earliest) : undefined
  if (sessionDays) {
    params.values.session_days_from = clickhouseInstant(sessionDays.from)
    params.values.session_days_to = clickhouseInstant(sessionDays.to)
  }
  // A revenue event's session meets a filter on the name that `revenue` meets: the revenue events skip it.
  const revenueOnes = revenueEventFilters(req.filters)
  const revenueFilters = !byDimension && !pages && filters.sealed ? sealedRevenueFilters(revenueOnes, build, earliest, params, postings) : undefined
  // The days' sessions began in the window, so the revenue's postings (from an earlier day) pick the
  // same of them: one text, which ClickHouse unions once for both (L, 30d, `name is revenue`: 318 -> 283 ms of CPU).
  const daySessions = revenueFilters && revenueOnes.length === req.filters.length ? revenueFilters.revenue_sessions : filters.sealed
  // Filters all on the page leave each view and revenue event in or out by its own page: the page tables have those.
  const pageTables = pages && sealedPageFiltering(req.filters) === 'page'
  if (pageTables) {
    const viewDays = wholeDays(req.range.start, bucketStarts, { from: earliest, to: earlier(req.range.end, build.closedAt) }, build.closedAt)
    Object.assign(params.values, {
      view_days_from: clickhouseInstant(viewDays.from),
      view_days_to: clickhouseInstant(viewDays.to),
      page_held_from: clickhouseInstant(build.pageHeldFrom),
      held_out: build.pageHeld,
    })
  }
  const views = pageTables ? '_sealed_metrics_page_tables' : '_sealed_metrics_page_views'
  // Every revenue event outside the whole hours is from C on: the events' snapshot has them.
  const revenueSnapshot =
    req.filters.length === 0 && build.eventsStamp !== undefined && +rollup.from === +earliest && +rollup.to >= +build.closedAt && holes.length === 0
  if (revenueSnapshot) params.values.events_stamp = build.eventsStamp
  return {
    name: 'insights_metrics_sealed',
    sql: renderSql('insights_metrics_sealed', {
      period: 'period',
      live: liveSource(build),
      ...parts,
      rollup_holes: split.periods('period'),
      rollups: byDimension ? filteredRows(byDimension.dimension, req.filters, 'sealed_rollups')! : 'sealed_rollups',
      rollup_filters: byDimension ? filters.sealed : '',
      sessions: sessionDays
        ? renderSql('_sealed_metrics_session_days', { ...parts, session_filters: daySessions, day_views: pages ? 'toUInt64(0)' : 'arraySum((x, m) -> x * m, views, mask)' })
        : sealedSessions
          ? renderSql('_sealed_metrics_sessions', parts)
          : '',
      live_part: req.range.end > build.heldFrom ? renderSql('_sealed_metrics_live', { ...parts, ...liveRows(build) }) : '',
      page_views: pages ? renderSql(views, { bucket, view_filters: eventFilters }) : '',
      revenue_events: byDimension
        ? renderSql('_sealed_metrics_revenue_days', {
            revenue_days: filteredRows(byDimension.dimension, req.filters, 'sealed_dimension_revenue')!,
            rollup_filters: filters.sealed,
            live_filters: filters.live,
          })
        : pageTables
          ? renderSql('_sealed_metrics_page_revenue', { revenue_filters: eventFilters })
          : revenueFilters
            ? renderSql('_sealed_metrics_revenue', revenueFilters)
            : revenueSnapshot
              ? renderSql('_sealed_metrics_revenue_snapshot')
              : renderSql('_sealed_metrics_revenue_events', { revenue_filters: eventFilters, hole_events: split.rows }),
    }),
    params: params.values,
    ...(req.filters.length > 0 ? { settings: UNINDEXED_SETS } : {}),
  }
}
