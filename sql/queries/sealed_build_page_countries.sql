-- A build's page day rows by the country of their sessions (sql/schema/048_sealed_page_countries.sql):
-- its views by UTC day, page and their session's country (a view's session by its number; views
-- without one are left out), and its sessions with views by the UTC day of their start, entry page
-- and country, leaving out the held-out sessions as sealed_build_page_entries does.
--
-- Both halves' rows are grouped once, the sessions' rows marked (not views): a group of the views
-- first and a second group over both halves' groups merged each bitmap twice (L: 21.5 s of CPU ->
-- 17.5 s, the same rows; benchmarks/README.md, thirteenth stop).
INSERT INTO sealed_page_countries (project_id, version, country, day, origin, path, views, duration_ms, durations, titles, sessions, visitors, entries, bounces)
SELECT {project:String}, {version:UInt64}, country, day, origin, path,
  countIf(is_view), sum(ms), countIf(timed), sumMapIf(map(title, toUInt64(1)), title != ''), groupBitmapStateIf(sno, is_view), groupBitmapStateIf(vno, is_view),
  countIf(entered), countIf(bounced)
FROM (
  SELECT s.country AS country, toDate(v.created_at) AS day, v.origin AS origin, v.path AS path, true AS is_view,
    ifNull(v.duration_ms, 0) AS ms, v.duration_ms IS NOT NULL AS timed, v.title AS title, v.sno AS sno, v.vno AS vno, false AS entered, false AS bounced
  FROM sealed_page_views AS v
  INNER JOIN (
    SELECT sno, country FROM sealed_sessions WHERE project_id = {project:String} AND version = {version:UInt64}
  ) AS s ON s.sno = v.sno
  WHERE v.project_id = {project:String} AND v.version = {version:UInt64} AND v.sno != 0
  UNION ALL
  SELECT country, toDate(created_at), entry_origin, entry_path, false, 0, false, '', toUInt32(0), toUInt32(0), true, is_bounce
  FROM sealed_sessions
  WHERE project_id = {project:String} AND version = {version:UInt64} AND screen_view_count > 0
    AND session_key NOT IN (
      SELECT key FROM sealed_page_keys WHERE project_id = {project:String} AND version = {version:UInt64} AND kind = 5)
)
GROUP BY country, day, origin, path
