-- Numbers the profiles of events before C that have no number yet, after the numbers given so far,
-- in the order they were first seen. sealed_build_visitors numbers each session's visitor (the
-- profile of its first event); a session that identifies itself later, or an event outside any
-- session, brings profiles that charts count too.
INSERT INTO sealed_visitors (project_id, profile_key, vno)
SELECT {project:String}, profile_key,
  toUInt32((SELECT max(vno) FROM sealed_visitors WHERE project_id = {project:String}) + row_number() OVER (ORDER BY first_seen, profile_key))
FROM (
  SELECT reinterpretAsUInt128(sipHash128(profile_id)) AS profile_key, min(created_at) AS first_seen
  FROM events
  WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')} AND profile_id != ''
  GROUP BY profile_key
)
WHERE profile_key NOT IN (SELECT profile_key FROM sealed_visitors WHERE project_id = {project:String})
