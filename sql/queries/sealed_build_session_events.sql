-- A build's sessions with their events before C as arrays (sql/schema/021_product_sessions.sql):
-- their first and last time, their key, and their times in ms and names, sorted by time, then name.
-- Grouped by the key rather than the id: a fixed-width key hashes cheaper than a string (L: 18 s of
-- CPU -> 15 s, the same rows). Each event is sorted as one number, its time times the number of
-- distinct names plus its name's rank among them, instead of a (time, name) tuple (L, the SELECT
-- alone: 16.4 -> 12.1 s of CPU, medians of 3, the same rows); exact below 10^7 distinct names.
INSERT INTO sealed_session_events (project_id, version, created_at, ended_at, session_key, times, names)
WITH (SELECT arraySort(groupUniqArray(name)) FROM events
      WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')} AND session_id != '') AS ranked,
  toUInt64(length(ranked)) AS n
SELECT {project:String}, {version:UInt64}, first_at, last_at, session_key, arrayMap(x -> intDiv(x, n), events), arrayMap(x -> ranked[x % n + 1], events)
FROM (
  SELECT min(created_at) AS first_at, max(created_at) AS last_at, reinterpretAsUInt128(sipHash128(session_id)) AS session_key,
    arraySort(groupArray(toUInt64(toUnixTimestamp64Milli(created_at)) * n + toUInt64(indexOf(ranked, name) - 1))) AS events
  FROM events
  WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')} AND session_id != ''
  GROUP BY session_key
)
