-- The views of a build, as insights_pages counts them: time on page to the session's next event.
-- The sessions held out are left to the
-- request, so the next event of every view here is before C, or none. Sessions are numbered as
-- sealed_sessions numbers them (a UTC day's a run of numbers), so that a filter on their
-- attributes keeps views by number; the views without a session are session 0. Visitors are
-- numbered by sealed_visitors, which numbered every profile before C but perhaps the empty one (0
-- here, and for requests).
--
-- The next event is found per UTC day and session, the order session_timeline is stored in, so the
-- window reads it in order instead of sorting every event by session (L: 40-43 s of CPU -> 24 s,
-- the same rows). A view last in its session's day ends at the session's first event of a later
-- day: `x`, from the few sessions on several days (the sealed sessions' first and last days) and the
-- events without a session (one key, every day).
INSERT INTO sealed_page_views (project_id, version, created_at, origin, path, title, sno, vno, duration_ms)
SELECT {project:String}, {version:UInt64}, v.created_at, v.origin, v.path, v.title, n.sno, p.vno,
  dateDiff('millisecond', v.created_at, coalesce(v.next_at, x.later_at))
FROM (
  SELECT created_at, toDate(created_at) AS day, origin, path, title, session_key, profile_key, next_at
  FROM (
    SELECT created_at, is_view, origin, path, title, session_key, profile_key,
      leadInFrame(toNullable(created_at)) OVER (
        PARTITION BY toDate(created_at), session_key ORDER BY created_at, id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING
      ) AS next_at
    FROM session_timeline
    WHERE {{> sealed_page_events}}
  )
  WHERE is_view
) AS v
LEFT JOIN (
  SELECT session_key, day, leadInFrame(toNullable(first_at)) OVER (PARTITION BY session_key ORDER BY day ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS later_at
  FROM (
    SELECT session_key, toDate(created_at) AS day, min(created_at) AS first_at
    FROM session_timeline
    WHERE {{> sealed_page_events}}
      AND session_key IN (
        SELECT session_key FROM sealed_sessions
        WHERE project_id = {project:String} AND version = {version:UInt64} AND toDate(created_at) != toDate(ended_at)
        UNION ALL
        SELECT reinterpretAsUInt128(sipHash128('')))
    GROUP BY session_key, day
  )
) AS x ON x.session_key = v.session_key AND x.day = v.day
LEFT JOIN (
  SELECT session_key, sno FROM sealed_sessions WHERE project_id = {project:String} AND version = {version:UInt64}
) AS n ON n.session_key = v.session_key
LEFT JOIN (
  SELECT profile_key, min(vno) AS vno FROM sealed_visitors WHERE project_id = {project:String} GROUP BY profile_key
) AS p ON p.profile_key = v.profile_key
