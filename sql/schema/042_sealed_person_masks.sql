-- Funnels by person (sql/queries/insights_funnel_people_sealed.sql): each episode's names as a mask
-- (NAME_BIT in src/query/product/sealed-units.ts: a bit per name by its hash, names that share a bit
-- are told apart by windowFunnel), and the episodes sorted by it. A person's level 1 comes from the
-- step-1 name's rollups (sealed_event_rollups), so only the episodes with step 2's name need their
-- arrays and windowFunnel: 15 % of L's episodes in a 30-day window, a third of the events. Sorted
-- by time, they fall in every granule and every array is read (PREWHERE has(names, …): no gain);
-- sorted by mask, the key finds them (the episodes' part 571 -> 413 ms of CPU, 3 steps, load 16).
-- A build's rows are rebuilt whole, so the old table goes rather than gaining a column it cannot
-- sort by.
DROP TABLE IF EXISTS sealed_person_events;

CREATE TABLE IF NOT EXISTS sealed_person_events (
  project_id LowCardinality(String),
  version UInt64,
  mask UInt64,
  created_at DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
  ended_at DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
  profile_key UInt128,
  vno UInt32,
  anonymous Bool,
  linked Bool,
  twofold Bool,
  times Array(UInt64) CODEC(T64, LZ4),
  names Array(LowCardinality(String)),
  -- Episodes are short, as sessions are: a window's start prunes granules through this index.
  INDEX ended ended_at TYPE minmax GRANULARITY 1
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (mask, created_at);
