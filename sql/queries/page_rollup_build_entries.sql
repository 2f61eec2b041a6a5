-- The sessions before C by the local day of their start and their entry page, read from the
-- sessions table, which is where a session's entry page and bounce are defined (a session without
-- views entered on none). The held-out sessions (kind 5) are the request's; every other session
-- that started before C has no view after it, so its entry and bounce are those of its events before C.
INSERT INTO page_rollup_days (project_id, version, day, origin, path, entries, bounces)
SELECT {project:String}, {version:UInt64}, toDate(created_at, {timezone:String}) AS day, entry_origin, entry_path, count(), countIf(is_bounce)
FROM sessions FINAL
WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')} AND screen_view_count > 0
  AND reinterpretAsUInt128(sipHash128(id)) NOT IN (
    SELECT key FROM page_rollup_keys WHERE project_id = {project:String} AND version = {version:UInt64} AND kind = 5)
GROUP BY day, entry_origin, entry_path
