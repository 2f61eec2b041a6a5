-- Event filters on the sealed history (src/query/sealed-filters.ts). A filter on an event attribute
-- keeps the sessions with at least one matching event; on the sealed sessions that was a scan of
-- the events' column from the window's start (L, 30d, a `path` filter: 0.4-1.2 s of a 1.6 s
-- breakdown). Here each build numbers its sessions densely (`sno`, per build) and writes, per UTC
-- day and distinct (name, origin, path) of the events before C, the set of sessions with such an
-- event: a filter's predicate runs on those distinct values and its sessions are the union of their
-- bitmaps (27-36 ms for the same filter). Held sessions have no postings: requests read them live,
-- their events after C included.
ALTER TABLE sealed_sessions ADD COLUMN IF NOT EXISTS sno UInt32;

CREATE TABLE IF NOT EXISTS sealed_event_postings (
  project_id LowCardinality(String),
  version UInt64,
  day Date,
  name LowCardinality(String),
  origin LowCardinality(String),
  path String CODEC(ZSTD(1)),
  sessions AggregateFunction(groupBitmap, UInt32)
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (day, name, origin, path)
-- A filter reads every bitmap of the granules its days touch: small granules, as sealed_rollups has.
SETTINGS index_granularity = 256;
