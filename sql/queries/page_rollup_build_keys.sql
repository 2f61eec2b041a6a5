-- page_rollup_keys of one build (see sql/schema/011_page_rollups.sql for the kinds).
INSERT INTO page_rollup_keys (project_id, version, kind, day, origin, path, key)
WITH views_before AS (
  SELECT toDate(created_at, {timezone:String}) AS day, origin, path, session_key, profile_key
  FROM session_timeline
  WHERE {{> rollup_events}} AND is_view
)
SELECT {project:String}, {version:UInt64}, kind, day, origin, path, key
FROM (
  SELECT toUInt8(2) AS kind, max(day) AS day, origin, path, reinterpretAsUInt128(sipHash128(origin, path, profile_key)) AS key
  FROM views_before
  GROUP BY origin, path, profile_key
  UNION ALL
  SELECT if(argMax(is_view, (created_at, id)), toUInt8(3), toUInt8(4)), toDate(0), '', '', session_key
  FROM session_timeline
  WHERE {{> rollup_events}}
  GROUP BY session_key
)
