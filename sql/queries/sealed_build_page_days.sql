-- A build's day rows of pages from its views: sums, titles and the sets of session and visitor
-- numbers by UTC day and page.
INSERT INTO sealed_page_days (project_id, version, days, day, origin, path, views, duration_ms, durations, titles, sessions, visitors)
SELECT {project:String}, {version:UInt64}, 1, toDate(created_at) AS day, origin, path,
  count(), sum(ifNull(duration_ms, 0)), countIf(duration_ms IS NOT NULL), sumMapIf(map(title, toUInt64(1)), title != ''),
  groupBitmapState(sno), groupBitmapState(vno)
FROM sealed_page_views
WHERE project_id = {project:String} AND version = {version:UInt64}
GROUP BY day, origin, path
