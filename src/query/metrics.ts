import type { DateTime } from 'luxon'
import type { Statement } from '../clickhouse/run.ts'
import { revenueEventFilters } from './filter-holds.ts'
import { compileFilters, type Filter } from './filters.ts'
import { bucketExpression, windowPlaceholders } from './insights.ts'
import { renderSql } from './sql-templates.ts'
import { boundedBuckets, isoWithOffset, type Interval, type TimeRange } from './time-range.ts'

/** The values /metrics reports for a window, a bucket or the previous window, in OpenPanel's order. */
export const METRIC_NAMES = [
  'unique_visitors',
  'total_sessions',
  'bounce_rate',
  'avg_session_duration',
  'total_screen_views',
  'views_per_session',
  'total_revenue',
] as const
export type MetricValues = Record<(typeof METRIC_NAMES)[number], number>

export interface Metrics {
  metrics: MetricValues
  series: (MetricValues & { date: string })[]
  previous?: MetricValues
}

/** One row of sql/queries/insights_metrics.sql. */
export type MetricRow = MetricValues & { period: number; bucket: number; is_total: number }

export interface MetricsRequest {
  projectId: string
  range: TimeRange
  /** When set, period 1 of the result is this window. */
  previous?: TimeRange
  interval: Interval
  filters: readonly Filter[]
}

/**
 * OpenPanel's page view of /metrics: with a filter on `path`, the screen views and the revenue are
 * the matching events' own (that page's views, the revenue events on it), not every view and
 * purchase of the sessions that visited it. Sessions, visitors, bounces and duration stay those of
 * the matching sessions.
 */
export const filtersPages = (filters: readonly Filter[]) =>
  filters.some((f) => f.name === 'path' && (f.value.length > 0 || f.operator === 'isNull' || f.operator === 'isNotNull'))

export function metricsStatement(req: MetricsRequest): Statement {
  const { params, ctx } = windowPlaceholders(req.projectId, req.range, req.previous?.start)
  const tz = params.add(req.range.timezone, 'String')
  const bucket = bucketExpression(req.interval, tz)
  const sessionFilters = compileFilters(req.filters, 'sessions', params, ctx)
  if (filtersPages(req.filters)) {
    const eventFilters = compileFilters(req.filters, 'pageViews', params, ctx)
    return {
      name: 'insights_metrics',
      sql: renderSql('insights_metrics', {
        bucket,
        session_filters: sessionFilters,
        session_views: 'toUInt64(0)',
        revenue_filters: eventFilters,
        page_views: renderSql('_metrics_page_views', { bucket, view_filters: eventFilters }),
      }),
      params: params.values,
    }
  }
  // A purchase in the window may belong to a session that began before it, whose matching event
  // may be older than the window too: its events are searched from the earliest such session's start.
  // Only sessions with revenue can add any, which keeps the set small. A filter on the event's name
  // that `revenue` meets holds for the session of every revenue event: it is not tested again.
  const overlapping = `project_id = ${ctx.project} AND ended_at >= ${ctx.from} AND created_at < ${ctx.to}`
  const revenueCtx = { ...ctx, from: `(SELECT min(created_at) FROM sessions FINAL WHERE ${overlapping})` }
  const revenueFilters = sessionFilters
    ? ` AND session_id IN (SELECT id FROM sessions FINAL WHERE ${overlapping} AND revenue > 0` +
      `${compileFilters(revenueEventFilters(req.filters), 'sessions', params, revenueCtx)})`
    : ''
  return {
    name: 'insights_metrics',
    sql: renderSql('insights_metrics', {
      bucket,
      session_filters: sessionFilters,
      session_views: 'screen_view_count',
      revenue_filters: revenueFilters,
      page_views: '',
    }),
    params: params.values,
  }
}

/** The start of every bucket of the window. */
export const metricsBuckets = (range: TimeRange, interval: Interval): DateTime[] => boundedBuckets(range, interval, 'choose a larger interval')

const pick = (row: MetricRow | undefined): MetricValues =>
  Object.fromEntries(METRIC_NAMES.map((name) => [name, row?.[name] ?? 0])) as MetricValues

/**
 * The body of /metrics from the statement's rows: every bucket of the window in order, zeros where
 * the engine returned none, and the totals of the window (and of the previous one when asked for).
 */
export function assembleMetrics(rows: readonly MetricRow[], bucketStarts: readonly DateTime[], withPrevious: boolean): Metrics {
  const current = rows.filter((r) => r.period === 0)
  const byBucket = new Map(current.filter((r) => r.is_total === 0).map((r) => [r.bucket, r]))
  return {
    metrics: pick(current.find((r) => r.is_total === 1)),
    series: bucketStarts.map((start) => ({ date: isoWithOffset(start), ...pick(byBucket.get(start.toSeconds())) })),
    ...(withPrevious ? { previous: pick(rows.find((r) => r.period === 1 && r.is_total === 1)) } : {}),
  }
}
