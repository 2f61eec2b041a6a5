-- The sessions sealed whole of each UTC day (of their start) as arrays in number order, for /metrics
-- filtered on events' names, origins or paths (sql/queries/_sealed_metrics_session_days.sql): such a
-- filter is a condition on the session's number alone (the postings of 027), tested over a day's
-- numbers as a mask that picks the day's visitors, durations, views and bounces, instead of a read
-- of the window's rows of sealed_sessions (L, 30d, `name is revenue`: that part 238 -> 111 ms of CPU).
CREATE TABLE IF NOT EXISTS sealed_session_days (
  project_id LowCardinality(String),
  version UInt64,
  day Date,
  snos Array(UInt32) CODEC(Delta, LZ4),
  vnos Array(UInt32),
  durations Array(UInt64),
  views Array(UInt64),
  bounces Array(UInt8)
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY day
-- A row is a day's every session: one granule per few rows.
SETTINGS index_granularity = 8;
