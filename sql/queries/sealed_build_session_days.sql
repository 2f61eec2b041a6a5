-- Each UTC day's sessions sealed whole, by their start, as arrays in number order
-- (sql/schema/044_sealed_session_days.sql). Held sessions are left out: requests read them live.
INSERT INTO sealed_session_days (project_id, version, day, snos, vnos, durations, views, bounces)
SELECT {project:String}, {version:UInt64}, day,
  arrayMap(s -> s.1, rows), arrayMap(s -> s.2, rows), arrayMap(s -> s.3, rows), arrayMap(s -> s.4, rows), arrayMap(s -> s.5, rows)
FROM (
  SELECT toDate(created_at) AS day, arraySort(groupArray((sno, vno, duration, screen_view_count, is_bounce))) AS rows
  FROM sealed_sessions
  WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held
  GROUP BY day
)
