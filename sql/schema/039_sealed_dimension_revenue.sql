-- Per dimension, UTC day and value, the revenue of the events a build's sessions sealed whole paid
-- that day, by their session's value (sealed_revenue_events by sealed_sessions.sno). /metrics counts
-- revenue by its event and sessions by their start: with filters all on one dimension's value (or
-- its prefix), whole UTC days come from that dimension's rollups for the sessions and from here for
-- the revenue, instead of a scan of the window's sealed sessions for each (L, 30d, `country is US`).
CREATE TABLE IF NOT EXISTS sealed_dimension_revenue (
  project_id LowCardinality(String),
  version UInt64,
  dimension LowCardinality(String),
  day DateTime('UTC'),
  prefix LowCardinality(String),
  value String CODEC(ZSTD(1)),
  revenue UInt64
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (dimension, day, prefix, value)
SETTINGS index_granularity = 1024;
