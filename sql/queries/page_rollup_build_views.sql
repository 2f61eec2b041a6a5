-- The views before C by local day and page, as insights_pages counts them: time on page
-- to the session's next event, titles counted, sessions distinct within the day. The sessions held
-- out are left to the request, so the next event of every view here is before C, or none.
INSERT INTO page_rollup_days (project_id, version, day, origin, path, views, sessions, duration_ms, durations, titles)
SELECT
  {project:String},
  {version:UInt64},
  toDate(created_at, {timezone:String}) AS day,
  origin,
  path,
  count(),
  uniqExact(session_key),
  sumIf(dateDiff('millisecond', created_at, next_at), next_at IS NOT NULL),
  countIf(next_at IS NOT NULL),
  sumMapIf(map(title, toUInt64(1)), title != '')
FROM (
  SELECT created_at, is_view, origin, path, title, session_key,
    leadInFrame(toNullable(created_at)) OVER (
      PARTITION BY session_key ORDER BY created_at, id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING
    ) AS next_at
  FROM session_timeline
  WHERE {{> rollup_events}}
)
WHERE is_view
GROUP BY day, origin, path
