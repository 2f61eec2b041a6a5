-- The totals rows of a build (dimension ''): the sealed sessions (held ones excluded) by UTC hour of
-- their start, and the revenue events before C by UTC hour of their own time.
INSERT INTO sealed_rollups (project_id, version, dimension, hours, period, prefix, value, sessions, bounces, duration, pageviews, revenue, event_revenue, visitors)
SELECT {project:String}, {version:UInt64}, '', 1, hour, '', '', sum(n), sum(b), sum(d), sum(v), 0, sum(r), groupBitmapMergeState(bitmap)
FROM (
  SELECT toStartOfHour(created_at) AS hour, count() AS n, countIf(is_bounce) AS b, sum(duration) AS d,
    sum(screen_view_count) AS v, toUInt64(0) AS r, groupBitmapState(vno) AS bitmap
  FROM sealed_sessions
  WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held
  GROUP BY hour
  UNION ALL
  SELECT toStartOfHour(created_at), 0, 0, 0, 0, sum(revenue), groupBitmapStateIf(toUInt32(0), 0)
  FROM events
  WHERE project_id = {project:String} AND name = 'revenue' AND created_at < {closed:DateTime64(3, 'UTC')}
  GROUP BY 1
)
GROUP BY hour
