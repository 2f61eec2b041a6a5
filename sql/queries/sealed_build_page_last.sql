-- A build's pairs of page and session number, and of page and visitor number, counted on the UTC
-- day of their last view before C (sql/schema/034_sealed_page_last.sql): from each page's day rows,
-- latest first, the size of the union of its bitmaps so far less that of the day after. The
-- unions grow in place, a row at a time (L: 1.0 s of CPU; grouping the 9M views by page and number
-- instead took 42 s).
INSERT INTO sealed_page_days (project_id, version, days, day, origin, path, sessions_last, visitors_last)
SELECT {project:String}, {version:UInt64}, 1, day, origin, path,
  sessions - lagInFrame(sessions, 1, 0) OVER later, visitors - lagInFrame(visitors, 1, 0) OVER later
FROM (
  SELECT day, origin, path, groupBitmapMerge(sessions) OVER later AS sessions, groupBitmapMerge(visitors) OVER later AS visitors
  FROM sealed_page_days
  WHERE project_id = {project:String} AND version = {version:UInt64} AND days = 1 AND views > 0
  WINDOW later AS (PARTITION BY origin, path ORDER BY day DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
WINDOW later AS (PARTITION BY origin, path ORDER BY day DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
