-- A build's page day rows by the country of their sessions (sql/schema/048_sealed_page_countries.sql):
-- its views by UTC day, page and their session's country (a view's session by its number; views
-- without one are left out), and its sessions with views by the UTC day of their start, entry page
-- and country, leaving out the held-out sessions as sealed_build_page_entries does.
INSERT INTO sealed_page_countries (project_id, version, country, day, origin, path, views, duration_ms, durations, titles, sessions, visitors, entries, bounces)
SELECT {project:String}, {version:UInt64}, country, day, origin, path,
  sum(n), sum(ms), sum(timed), sumMap(named), groupBitmapMergeState(sessions), groupBitmapMergeState(visitors), sum(entered), sum(bounced)
FROM (
  SELECT s.country AS country, toDate(v.created_at) AS day, v.origin AS origin, v.path AS path,
    count() AS n, sum(ifNull(v.duration_ms, 0)) AS ms, countIf(v.duration_ms IS NOT NULL) AS timed,
    sumMapIf(map(v.title, toUInt64(1)), v.title != '') AS named, groupBitmapState(v.sno) AS sessions, groupBitmapState(v.vno) AS visitors,
    toUInt64(0) AS entered, toUInt64(0) AS bounced
  FROM sealed_page_views AS v
  INNER JOIN (
    SELECT sno, country FROM sealed_sessions WHERE project_id = {project:String} AND version = {version:UInt64}
  ) AS s ON s.sno = v.sno
  WHERE v.project_id = {project:String} AND v.version = {version:UInt64} AND v.sno != 0
  GROUP BY country, day, origin, path
  UNION ALL
  SELECT country, toDate(created_at), entry_origin, entry_path, 0, 0, 0, map(), groupBitmapStateIf(toUInt32(0), 0), groupBitmapStateIf(toUInt32(0), 0),
    count(), countIf(is_bounce)
  FROM sealed_sessions
  WHERE project_id = {project:String} AND version = {version:UInt64} AND screen_view_count > 0
    AND session_key NOT IN (
      SELECT key FROM sealed_page_keys WHERE project_id = {project:String} AND version = {version:UInt64} AND kind = 5)
  GROUP BY country, toDate(created_at), entry_origin, entry_path
)
GROUP BY country, day, origin, path
