-- The numbers of a build's last {seen_days} UTC days' page rows whose last view of the page before C
-- fell on that day (sql/schema/038_sealed_page_ends.sql): each day row's sets less the union of the
-- page's later days, grown a row at a time, latest first (L: 33 days of 400 pages, about 2 s).
INSERT INTO sealed_page_ends (project_id, version, day, origin, path, sessions, visitors)
SELECT {project:String}, {version:UInt64}, day, origin, path,
  bitmapAndnot(sessions, groupBitmapMergeState(sessions) OVER later),
  bitmapAndnot(visitors, groupBitmapMergeState(visitors) OVER later)
FROM sealed_page_days
WHERE project_id = {project:String} AND version = {version:UInt64} AND days = 1 AND views > 0
  AND day >= toDate({closed:DateTime64(3, 'UTC')}) - {seen_days:UInt16}
WINDOW later AS (PARTITION BY origin, path ORDER BY day DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
