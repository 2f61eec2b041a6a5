-- The sessions whose every event came before C, as the sessions table has them, with their
-- visitor's number.
INSERT INTO sealed_sessions (project_id, version, created_at, ended_at, id, session_key, profile_key, vno, held,
  screen_view_count, event_count, revenue, entry_at, entry_origin, entry_path, exit_at, exit_origin, exit_path, {{attribute_names}})
SELECT {project:String}, {version:UInt64}, s.created_at, s.ended_at, s.id, reinterpretAsUInt128(sipHash128(s.id)), s.profile_key,
  v.vno, false, s.screen_view_count, s.event_count, s.revenue,
  tupleElement(s.entry, 'at'), s.entry_origin, s.entry_path, tupleElement(s.exit, 'at'), s.exit_origin, s.exit_path, {{attribute_names}}
FROM (
  SELECT id, created_at, ended_at, profile_key, screen_view_count, event_count, revenue,
    entry, entry_origin, entry_path, exit, exit_origin, exit_path, {{attribute_names}}
  FROM sessions FINAL
  WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')} AND ended_at < {closed:DateTime64(3, 'UTC')}
) AS s
INNER JOIN (
  SELECT profile_key, min(vno) AS vno FROM sealed_visitors WHERE project_id = {project:String} GROUP BY profile_key
) AS v USING (profile_key)
