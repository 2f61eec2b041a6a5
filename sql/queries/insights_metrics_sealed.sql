-- /insights/{projectId}/metrics from the sealed history: the same rows as insights_metrics. Before
-- C, whole UTC hours [rollup_from, rollup_to) come from the totals (sessions by their start, revenue
-- by its event): the whole UTC days among them [long_from, long_to) from the day rows, the other
-- hours from the hourly ones, but for the hours a bucket or the current window starts inside
-- ({holes}: `rollup_holes` leaves them out); the rest, those hours included, from sealed_sessions
-- (the `sessions` slot, _sealed_metrics_sessions.sql, or, filtered on events' names, origins and
-- paths alone over whole UTC days, _sealed_metrics_session_days.sql) and events; from C on, the live sessions (the
-- `live_part` slot, _sealed_metrics_live.sql) and the revenue events. A slot is empty where its part
-- of the window is. The caller uses hours only when no filter applies, and not for hourly buckets
-- off the hour. The revenue events (the `revenue_events` slot) are those of the window outside the
-- whole hours, from the events or, when those are all from C on, the events' snapshot
-- (_sealed_metrics_revenue_snapshot.sql); filtered, those of the sessions that pass the filters
-- (_sealed_metrics_revenue.sql).
-- With a filter on `path` the views and the revenue are the matching
-- events' own (the `page_views` slot): from the page tables when every filter is on the page
-- (_sealed_metrics_page_tables.sql, _sealed_metrics_page_revenue.sql), else read from events
-- (_sealed_metrics_page_views.sql); the sessions bring no views (`session_views` is 0).
WITH
{{live}}
SELECT
  period,
  bucket,
  grouping(bucket) AS is_total,
  groupBitmapMerge(bitmap) + uniqExactArray(unnumbered) AS unique_visitors,
  sum(n) AS total_sessions,
  if(total_sessions = 0, 0, round(100 * sum(bounces) / total_sessions, 2)) AS bounce_rate,
  if(total_sessions = 0, 0, round(sum(total_duration) / total_sessions / 1000, 2)) AS avg_session_duration,
  sum(views) AS total_screen_views,
  if(total_sessions = 0, 0, round(total_screen_views / total_sessions, 2)) AS views_per_session,
  sum(money) AS total_revenue
FROM (
  SELECT if(created_at >= {from:DateTime64(3, 'UTC')}, 0, 1) AS period, {{bucket}} AS bucket,
    sum(sessions) AS n, sum(bounced) AS bounces, sum(duration) AS total_duration, sum(pageviews) AS views,
    sum(event_revenue) AS money, groupBitmapMergeState(visitors) AS bitmap, CAST([], 'Array(UInt128)') AS unnumbered
  FROM (
    SELECT period AS created_at, sessions, bounces AS bounced, duration, pageviews, event_revenue, visitors
    FROM {{rollups}}
    WHERE project_id = {project:String} AND version = {version:UInt64} AND dimension = {dimension:String}
      AND {{> sealed_rollup_rows}}{{rollup_holes}}
      {{rollup_filters}}
  )
  GROUP BY period, bucket
{{sessions}}
{{live_part}}
{{page_views}}
  UNION ALL
  SELECT if(created_at >= {from:DateTime64(3, 'UTC')}, 0, 1) AS period, {{bucket}} AS bucket,
    toUInt64(0), toUInt64(0), toUInt64(0), toUInt64(0), sum(revenue),
    groupBitmapStateIf(toUInt32(0), 0), CAST([], 'Array(UInt128)')
  FROM ({{revenue_events}})
  GROUP BY period, bucket
)
GROUP BY GROUPING SETS ((period, bucket), (period))
