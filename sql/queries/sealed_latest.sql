-- Each project's sealed history: its newest build of the format this code reads (the held-out
-- session keys as text, which JSON keeps whole). Several projects at once: each read takes a turn on
-- chDB's one line for parameterized statements (src/services/batched-reads.ts).
SELECT project_id, version, closed_at, held_from, longest_ms, built_at, inserts_since, inserts,
  arrayMap(key -> toString(key), page_held) AS page_held, page_held_from, person_twofold_linked, sessions_recent
FROM sealed_builds
WHERE project_id IN {latest_projects:Array(String)} AND format = {format:UInt16}
ORDER BY version DESC
LIMIT 1 BY project_id
