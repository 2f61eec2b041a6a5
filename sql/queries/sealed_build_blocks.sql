-- The 8-day blocks of a build's dimension rollups, merged from its days: blocks aligned on the
-- epoch's days (day number divisible by 8), so that requests and builds agree on them.
INSERT INTO sealed_rollups (project_id, version, dimension, hours, period, prefix, value, sessions, bounces, duration, pageviews, revenue, event_revenue, visitors)
SELECT {project:String}, {version:UInt64}, dimension, 192, toDateTime(toDate(intDiv(toUInt32(toDate(period)), 8) * 8), 'UTC') AS block,
  prefix, value, sum(sessions), sum(bounces), sum(duration), sum(pageviews), sum(revenue), 0, groupBitmapMergeState(visitors)
FROM sealed_rollups
WHERE project_id = {project:String} AND version = {version:UInt64} AND hours = 24
GROUP BY dimension, block, prefix, value
