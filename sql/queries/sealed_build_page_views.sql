-- The views of a build, as insights_pages counts them: time on page to the session's next event.
-- The sessions held out are left to the
-- request, so the next event of every view here is before C, or none. Sessions are numbered as
-- sealed_sessions numbers them (a UTC day's a run of numbers), so that a filter on their
-- attributes keeps views by number; the views without a session are session 0. Visitors are
-- numbered by sealed_visitors, which numbered every profile before C but perhaps the empty one (0
-- here, and for requests).
INSERT INTO sealed_page_views (project_id, version, created_at, origin, path, title, sno, vno, duration_ms)
SELECT {project:String}, {version:UInt64}, v.created_at, v.origin, v.path, v.title, n.sno, p.vno, v.duration_ms
FROM (
  SELECT created_at, origin, path, title, session_key, profile_key, dateDiff('millisecond', created_at, next_at) AS duration_ms
  FROM (
    SELECT created_at, is_view, origin, path, title, session_key, profile_key,
      {{> next_event_at}}
    FROM session_timeline
    WHERE {{> sealed_page_events}}
  )
  WHERE is_view
) AS v
LEFT JOIN (
  SELECT session_key, sno FROM sealed_sessions WHERE project_id = {project:String} AND version = {version:UInt64}
) AS n USING (session_key)
LEFT JOIN (
  SELECT profile_key, min(vno) AS vno FROM sealed_visitors WHERE project_id = {project:String} GROUP BY profile_key
) AS p USING (profile_key)
