-- /insights/{projectId}/metrics. Sessions count in the period of their start; revenue counts by
-- the time of its `revenue` event. period 0 is the requested window, period 1 the window before
-- it (read only when previous=true). Rows with is_total = 1 are a period's totals, the others
-- its buckets (unix seconds of the bucket's start in the request's timezone). With a filter on
-- `path` (OpenPanel's page view of /metrics) the views are the matching page views themselves
-- (src 2, the `page_views` slot) and the sessions bring none (`session_views` is 0).
SELECT
  period,
  bucket,
  grouping(bucket) AS is_total,
  uniqExactIf(profile_key, src = 0) AS unique_visitors,
  countIf(src = 0) AS total_sessions,
  if(total_sessions = 0, 0, round(100 * countIf(src = 0 AND is_bounce) / total_sessions, 2)) AS bounce_rate,
  if(total_sessions = 0, 0, round(sumIf(duration, src = 0) / total_sessions / 1000, 2)) AS avg_session_duration,
  sum(screen_views) AS total_screen_views,
  if(total_sessions = 0, 0, round(total_screen_views / total_sessions, 2)) AS views_per_session,
  sumIf(event_revenue, src = 1) AS total_revenue
FROM (
  SELECT
    0 AS src,
    if(created_at >= {from:DateTime64(3, 'UTC')}, 0, 1) AS period,
    {{bucket}} AS bucket,
    profile_key,
    is_bounce,
    duration,
    {{session_views}} AS screen_views,
    toUInt64(0) AS event_revenue
  FROM sessions FINAL
  WHERE project_id = {project:String}
    AND created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
    {{session_filters}}
  UNION ALL
  SELECT
    1,
    if(created_at >= {from:DateTime64(3, 'UTC')}, 0, 1),
    {{bucket}},
    toUInt128(0),
    0,
    0,
    0,
    revenue
  FROM events
  WHERE project_id = {project:String} AND name = 'revenue'
    AND created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
    {{revenue_filters}}
{{page_views}}
)
GROUP BY GROUPING SETS ((period, bucket), (period))
