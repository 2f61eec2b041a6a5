-- One dimension's rollup rows of a build: the sealed sessions (held ones excluded) by UTC day of
-- their start and value.
INSERT INTO sealed_rollups (project_id, version, dimension, hours, period, prefix, value, sessions, bounces, duration, pageviews, revenue, event_revenue, visitors)
SELECT {project:String}, {version:UInt64}, {dimension:String}, 24, toStartOfDay(created_at) AS day, {{prefix}} AS prefix_value, {{column}} AS value_of,
  count(), countIf(is_bounce), sum(duration), sum(screen_view_count), sum(revenue), 0, groupBitmapState(vno)
FROM sealed_sessions
WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held
GROUP BY day, prefix_value, value_of
