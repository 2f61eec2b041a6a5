-- A build's pairs of page and session number, and of page and visitor number, counted on the UTC
-- day of their last view before C (sql/schema/034_sealed_page_last.sql): the same numbers the day
-- rows' bitmaps hold, views without a session as session 0.
INSERT INTO sealed_page_days (project_id, version, days, day, origin, path, sessions_last, visitors_last)
SELECT {project:String}, {version:UInt64}, 1, day, origin, path, countIf(kind = 0), countIf(kind = 1)
FROM (
  SELECT 0 AS kind, origin, path, toDate(max(created_at)) AS day
  FROM sealed_page_views
  WHERE project_id = {project:String} AND version = {version:UInt64}
  GROUP BY origin, path, sno
  UNION ALL
  SELECT 1, origin, path, toDate(max(created_at))
  FROM sealed_page_views
  WHERE project_id = {project:String} AND version = {version:UInt64}
  GROUP BY origin, path, vno
)
GROUP BY day, origin, path
