-- Events of the sealed history (src/services/sealed), for /export/charts: per UTC hour and event
-- name, how many events came before C and the exact set of their profiles as a bitmap of the dense
-- visitor numbers (sealed_visitors numbers every profile of an event before C, not only the first
-- profile of each session). `has_profile` keeps the events without a profile apart: the segments
-- that count profiles leave them out, the event segment counts them. Versioned like the other
-- sealed tables: a build's rows are a partition, dropped whole once a newer build replaced it.
CREATE TABLE IF NOT EXISTS sealed_event_rollups (
  project_id LowCardinality(String),
  version UInt64,
  name LowCardinality(String),
  hour DateTime('UTC'),
  has_profile Bool,
  events UInt64,
  profiles AggregateFunction(groupBitmap, UInt32)
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
-- A chart reads one event name's hours; '*' reads every name's.
ORDER BY (name, hour, has_profile)
SETTINGS index_granularity = 1024;
