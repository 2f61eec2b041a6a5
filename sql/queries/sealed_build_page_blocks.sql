-- The 8-day blocks of a build's page days, merged from its days: blocks aligned on the epoch's days
-- (day number divisible by 8), as sealed_build_blocks aligns the dimensions'.
INSERT INTO sealed_page_periods (project_id, version, hours, period, origin, path, views, duration_ms, durations, titles, sessions, visitors, entries, bounces)
SELECT {project:String}, {version:UInt64}, 192, toDateTime(toDate(intDiv(toUInt32(toDate(period)), 8) * 8), 'UTC') AS block, origin, path,
  sum(views), sum(duration_ms), sum(durations), sumMap(titles), groupBitmapMergeState(sessions), groupBitmapMergeState(visitors), sum(entries), sum(bounces)
FROM sealed_page_periods
WHERE project_id = {project:String} AND version = {version:UInt64} AND hours = 24
GROUP BY block, origin, path
