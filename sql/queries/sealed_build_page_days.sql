-- A build's day rows of pages from its views: sums, titles and the sets of session and visitor
-- numbers by UTC day and page, and how many of those numbers the page's views saw last that day
-- (sql/schema/034_sealed_page_last.sql): the size of the union of its bitmaps from that day on less
-- that from the day after, the unions grown a row at a time, latest first (L: about 1 s of CPU;
-- grouping the 9M views by page and number instead took 42 s).
INSERT INTO sealed_page_days (project_id, version, days, day, origin, path, views, duration_ms, durations, titles, sessions, visitors, sessions_last, visitors_last)
SELECT {project:String}, {version:UInt64}, 1, day, origin, path, n, ms, timed, named, sessions, visitors,
  sessions_since - lagInFrame(sessions_since, 1, 0) OVER later, visitors_since - lagInFrame(visitors_since, 1, 0) OVER later
FROM (
  SELECT *, groupBitmapMerge(sessions) OVER later AS sessions_since, groupBitmapMerge(visitors) OVER later AS visitors_since
  FROM (
    SELECT toDate(created_at) AS day, origin, path,
      count() AS n, sum(ifNull(duration_ms, 0)) AS ms, countIf(duration_ms IS NOT NULL) AS timed,
      sumMapIf(map(title, toUInt64(1)), title != '') AS named, groupBitmapState(sno) AS sessions, groupBitmapState(vno) AS visitors
    FROM sealed_page_views
    WHERE project_id = {project:String} AND version = {version:UInt64}
    GROUP BY day, origin, path
  )
  WINDOW later AS (PARTITION BY origin, path ORDER BY day DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
WINDOW later AS (PARTITION BY origin, path ORDER BY day DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
