-- Numbers the visitors of sessions begun before C that have none yet, after the numbers given so far,
-- in the order they were first seen. The numbers only grow, so visitors already numbered keep theirs.
INSERT INTO sealed_visitors (project_id, profile_key, vno)
SELECT {project:String}, profile_key,
  toUInt32((SELECT max(vno) FROM sealed_visitors WHERE project_id = {project:String}) + row_number() OVER (ORDER BY first_seen, profile_key))
FROM (
  SELECT profile_key, min(created_at) AS first_seen
  FROM sessions FINAL
  WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')}
  GROUP BY profile_key
)
WHERE profile_key NOT IN (SELECT profile_key FROM sealed_visitors WHERE project_id = {project:String})
