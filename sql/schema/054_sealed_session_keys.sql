-- The keys of the sessions a build sealed whole, sorted by key, for sealed_crossing: an event after
-- C of one of them means the build no longer holds. That check ran over sealed_sessions, which is
-- sorted by time, so it read every sealed session's key whatever it looked for: 42–49 ms on L (100M,
-- 4.4M sessions) for the ~100 events of a few seconds of inserts, once per new insert under live
-- traffic. Sorted by key in small granules, those events' keys touch ~165 of 4,316 granules: 16–19
-- ms. The first check after a build (every event from C on, thousands of keys) reads all of them,
-- as before. 68 MiB per build of L (the keys do not compress).
CREATE TABLE IF NOT EXISTS sealed_session_keys (
  project_id LowCardinality(String),
  version UInt64,
  session_key UInt128
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY session_key
SETTINGS index_granularity = 1024;
