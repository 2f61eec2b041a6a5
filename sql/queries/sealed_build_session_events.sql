-- A build's sessions with their events before C as arrays (sql/schema/021_product_sessions.sql):
-- their first and last time, their key, and their times in ms and names, sorted by time, then name.
-- Grouped by the key rather than the id: a fixed-width key hashes cheaper than a string (L: 18 s of
-- CPU -> 15 s, the same rows).
INSERT INTO sealed_session_events (project_id, version, created_at, ended_at, session_key, times, names)
SELECT {project:String}, {version:UInt64}, min(created_at), max(created_at), reinterpretAsUInt128(sipHash128(session_id)) AS session_key,
  arrayMap(x -> x.1, arraySort(groupArray((toUInt64(toUnixTimestamp64Milli(created_at)), name))) AS events), arrayMap(x -> x.2, events)
FROM events
WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')} AND session_id != ''
GROUP BY session_key
