-- A build's sessions, with their visitor's number: those whose every event came before C, as the
-- sessions table has them; then those that had events on both sides of C when the build read, as
-- their events before C make them, marked `held` (requests add their events from C on). One
-- statement, so that the table takes one part and needs no compaction. `sno` numbers the build's
-- sessions 1 to n, each UTC day's a run of numbers after the day before's, so that the bitmaps of
-- sealed_event_postings stay small (L, path contains /blog over 30 days: 246 ms to merge them with
-- numbers in the order of session ids, 27-36 ms with a day's numbers together). A day's keys are
-- gathered and numbered apart from the rest of the row: sorting whole rows took 40-54 s and
-- 4.0-4.7 GB on L, where the statement takes 12-15 s. A day's keys are numbered in their sorted
-- order: groupArray's order is the threads', which numbered 4.4M sessions of 100M's L differently
-- run after run (and every table with `sno` with them).
--
-- The visitor's key and the entry's and exit's times are only for a held session, which requests
-- extend with its events from C on (_sealed_live.sql): 0 on the others, which no request reads them
-- of, so that they take next to no room (L: 89 MiB less per build).
INSERT INTO sealed_sessions (project_id, version, created_at, ended_at, session_key, profile_key, vno, held,
  screen_view_count, revenue, entry_at, entry_origin, entry_path, exit_at, exit_origin, exit_path, {{attribute_names}}, sno)
SELECT u.*, n.sno
FROM (
SELECT {project:String}, {version:UInt64}, s.created_at, s.ended_at, reinterpretAsUInt128(sipHash128(s.id)) AS session_key, toUInt128(0) AS no_profile_key,
  v.vno, false, s.screen_view_count, s.revenue,
  toDateTime64(0, 3, 'UTC') AS no_entry_at, s.entry_origin, s.entry_path, toDateTime64(0, 3, 'UTC') AS no_exit_at, s.exit_origin, s.exit_path, {{attribute_names}}
FROM (
  SELECT id, created_at, ended_at, profile_key, screen_view_count, revenue,
    entry_origin, entry_path, exit_origin, exit_path, {{attribute_names}}
  FROM sessions FINAL
  WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')} AND ended_at < {closed:DateTime64(3, 'UTC')}
) AS s
INNER JOIN (
  SELECT profile_key, min(vno) AS vno FROM sealed_visitors WHERE project_id = {project:String} GROUP BY profile_key
) AS v USING (profile_key)
UNION ALL
SELECT {project:String}, {version:UInt64}, s.created_at, s.ended_at, s.session_key AS session_key, s.profile_key,
  v.vno, true, s.screen_view_count, s.revenue,
  tupleElement(s.entry, 1), tupleElement(s.entry, 2), tupleElement(s.entry, 3),
  tupleElement(s.exit, 1), tupleElement(s.exit, 2), tupleElement(s.exit, 3), {{attribute_names}}
FROM (
  SELECT {{> session_of_events}}
  FROM (
    SELECT *, created_at AS t FROM events
    WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')}
      AND created_at >= (
        SELECT min(created_at) FROM sessions FINAL
        WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')} AND ended_at >= {closed:DateTime64(3, 'UTC')}
      )
      AND session_id IN (
        SELECT id FROM sessions FINAL
        WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')} AND ended_at >= {closed:DateTime64(3, 'UTC')}
      )
  )
  GROUP BY session_id
) AS s
INNER JOIN (
  SELECT profile_key, min(vno) AS vno FROM sealed_visitors WHERE project_id = {project:String} GROUP BY profile_key
) AS v USING (profile_key)
) AS u
INNER JOIN (
  SELECT key AS session_key, toUInt32(first + i) AS sno
  FROM (
    SELECT keys, sum(length(keys)) OVER (ORDER BY day ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS first
    FROM (
      SELECT toDate(created_at) AS day, arraySort(groupArray(reinterpretAsUInt128(sipHash128(id)))) AS keys FROM sessions FINAL
      WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')}
      GROUP BY day
    )
  )
  ARRAY JOIN keys AS key, arrayEnumerate(keys) AS i
) AS n USING (session_key)
