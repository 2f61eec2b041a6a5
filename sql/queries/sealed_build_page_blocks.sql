-- The 8-day blocks of a build's page days, merged from its days: blocks aligned on the epoch's days
-- (day number divisible by 8), as sealed_build_merged aligns the dimensions'.
INSERT INTO sealed_page_days (project_id, version, days, day, origin, path, views, duration_ms, durations, titles, sessions, visitors, entries, bounces, sessions_last, visitors_last)
SELECT {project:String}, {version:UInt64}, 8, toDate(intDiv(toUInt32(day), 8) * 8) AS block, origin, path,
  sum(views), sum(duration_ms), sum(durations), sumMap(titles), groupBitmapMergeState(sessions), groupBitmapMergeState(visitors), sum(entries), sum(bounces),
  sum(sessions_last), sum(visitors_last)
FROM sealed_page_days
WHERE project_id = {project:String} AND version = {version:UInt64} AND days = 1
GROUP BY block, origin, path
