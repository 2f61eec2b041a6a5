-- The sessions before C by the local day of their start and their entry page, as the
-- sessions table derives them (first event, first view; events without a session are none).
INSERT INTO page_rollup_days (project_id, version, day, origin, path, entries, bounces)
SELECT {project:String}, {version:UInt64}, toDate(started_at, {timezone:String}) AS day, entry.2, entry.3, count(), countIf(views <= 1)
FROM (
  SELECT
    min(created_at) AS started_at,
    min(if(is_view, (created_at, origin, path), (toDateTime64('2299-12-31 00:00:00', 3, 'UTC'), '', ''))) AS entry,
    countIf(is_view) AS views
  FROM session_timeline
  WHERE {{> rollup_events}}
    AND session_key != reinterpretAsUInt128(sipHash128(''))
  GROUP BY session_key
  HAVING views > 0
)
GROUP BY day, entry.2, entry.3
