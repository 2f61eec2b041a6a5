-- The project's sealed history: its newest build of the format this code reads.
SELECT version, closed_at, held_from, longest_ms, built_at, inserts_since, inserts
FROM sealed_builds
WHERE project_id = {project:String} AND format = {format:UInt16}
ORDER BY version DESC
LIMIT 1
