-- A breakdown's distinct visitors over whole UTC days that reach C, as sums instead of unions of
-- bitmaps (what 034 did for /pages). `visitors_last` counts the visitor numbers whose last sealed
-- session with the row's value before C started on that day (or block: the sum of its days), so the
-- visitors seen with a value on any day from D to C are the sum over its rows from D on. L, 30d:
-- two thirds of entry pages' statement was merging the rows' bitmaps (benchmarks/README.md).
CREATE TABLE IF NOT EXISTS sealed_rollup_last (
  project_id LowCardinality(String),
  version UInt64,
  dimension LowCardinality(String),
  hours UInt8,
  period DateTime('UTC'),
  prefix LowCardinality(String),
  value String CODEC(ZSTD(1)),
  visitors_last UInt64
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (dimension, hours, period, prefix, value);

-- The last UTC day before C on which each numbered visitor of a live session had a sealed session
-- with a value, per dimension, among the sealed sessions since C's day minus SEEN_DAYS: a window
-- counted from sealed_rollup_last adds a live visitor only when not seen with that value on its
-- days. Written once per state of the events after C (`stamp`, see src/services/build-planner.ts).
CREATE TABLE IF NOT EXISTS sealed_live_seen (
  project_id LowCardinality(String),
  version UInt64,
  stamp UInt64,
  written_at DateTime('UTC') DEFAULT now(),
  dimension LowCardinality(String),
  prefix String,
  value String,
  vno UInt32,
  seen Date
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (stamp, dimension, prefix, value, vno)
TTL written_at + INTERVAL 1 HOUR;
