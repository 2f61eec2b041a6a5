-- A build's sessions with views by the UTC day of their start and their entry page (a session
-- without views entered on none), from its sealed sessions: every session but those held out has
-- no view after C, so its entry and bounce are those of its events before C.
INSERT INTO sealed_page_days (project_id, version, days, day, origin, path, entries, bounces)
SELECT {project:String}, {version:UInt64}, 1, toDate(created_at) AS day, entry_origin, entry_path, count(), countIf(is_bounce)
FROM sealed_sessions
WHERE project_id = {project:String} AND version = {version:UInt64} AND screen_view_count > 0
  AND session_key NOT IN (
    SELECT key FROM sealed_page_keys WHERE project_id = {project:String} AND version = {version:UInt64} AND kind = 5)
GROUP BY day, entry_origin, entry_path
