-- The project's rollup: its newest build (the held-out session keys as text, which JSON keeps whole).
SELECT version, timezone, closed_at, arrayMap(key -> toString(key), held_out) AS held_out, held_from, built_at, inserts_since, inserts
FROM page_rollups
WHERE project_id = {project:String}
ORDER BY version DESC
LIMIT 1
