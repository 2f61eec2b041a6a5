-- The CTEs of a per-session statement on the sealed history (insights_funnel_sealed.sql,
-- insights_user_flow_sealed.sql): `live`, the window's events from C on ({live_from} is the later
-- of C and the window's start) that pass `names`, read once into a scalar (as a plain CTE they were
-- read three times, for the NOT IN set, `merged` and its IN set: ~30 ms of CPU each on L, 8-10 % of
-- a funnel per session); `sealed`, the build's sessions with events before C that may overlap the
-- window (their arrays as event_times and event_names, names no statement's own columns take);
-- `live_sealed`, the sealed rows of the sessions with such a live event, found by the bloom filter
-- of session keys (sql/schema/026_sealed_session_times.sql) and read once into a scalar, so that a
-- statement can take them apart from `merged` without a second look-up; `merged`, every event in
-- the window of those sessions, before C from their arrays. Every other session's events in the
-- window are in its arrays alone.
--
-- Every sealed row began before C: a window that ends after C ({to} > {live_from}) bounds the rows'
-- start with nothing, and ClickHouse folds the test away (L, 30 days: the funnel per session 490 ->
-- 461 ms of CPU, the same rows, medians of 15, load 4; a second column tested per row).
WITH
  (
    SELECT groupArray((reinterpretAsUInt128(sipHash128(session_id)), toUInt64(toUnixTimestamp64Milli(created_at)), name))
    FROM events
    WHERE project_id = {project:String} AND created_at >= {live_from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
      AND session_id != '' {{names}}
  ) AS live_events,
  live AS (SELECT e.1 AS key, e.2 AS t, e.3 AS name FROM (SELECT arrayJoin(live_events) AS e)),
  sealed AS (
    SELECT session_key AS key, created_at, ended_at, times AS event_times, names AS event_names
    FROM sealed_session_events
    WHERE project_id = {project:String} AND version = {version:UInt64}
      AND ended_at >= {from:DateTime64(3, 'UTC')}
      AND ({to:DateTime64(3, 'UTC')} > {live_from:DateTime64(3, 'UTC')} OR created_at < {to:DateTime64(3, 'UTC')})
  ),
  (SELECT groupArray((key, event_times, event_names)) FROM sealed WHERE key IN (SELECT key FROM live)) AS live_sealed,
  merged AS (
    SELECT key, t, name FROM live
    UNION ALL
    SELECT r.1 AS key, t, name FROM (SELECT arrayJoin(live_sealed) AS r) ARRAY JOIN r.2 AS t, r.3 AS name
    WHERE t >= {from_ms:UInt64} AND t < {to_ms:UInt64} {{names}}
  )
