-- Sessions that viewed a page on more than one day before C: one row per such day but the last,
-- counted by page and day (see page_rollup_days.repeats).
INSERT INTO page_rollup_days (project_id, version, day, origin, path, repeats)
SELECT {project:String}, {version:UInt64}, day, origin, path, count()
FROM (
  SELECT origin, path, arraySort(groupUniqArray(toDate(created_at, {timezone:String}))) AS days
  FROM session_timeline
  WHERE {{> rollup_events}} AND is_view
  GROUP BY origin, path, session_key
  HAVING length(days) > 1
)
ARRAY JOIN arrayPopBack(days) AS day
GROUP BY day, origin, path
