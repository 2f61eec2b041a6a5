-- A build's day rows of pages, merged from its hours (views and entries).
INSERT INTO sealed_page_periods (project_id, version, hours, period, origin, path, views, duration_ms, durations, titles, sessions, visitors, entries, bounces)
SELECT {project:String}, {version:UInt64}, 24, toStartOfDay(period) AS day, origin, path,
  sum(views), sum(duration_ms), sum(durations), sumMap(titles), groupBitmapMergeState(sessions), groupBitmapMergeState(visitors), sum(entries), sum(bounces)
FROM sealed_page_periods
WHERE project_id = {project:String} AND version = {version:UInt64} AND hours = 1
GROUP BY day, origin, path
