-- /pages filtered on the session's country (src/query/sealed-pages.ts): the page day rows of
-- sql/schema/023_sealed_pages.sql split by the country of the views' and entries' sessions. A filter
-- on the country keeps a session with all its views and its entry or none of them, so it keeps these
-- rows whole, and a window's whole UTC days are read from them instead of a scan of its views tested
-- against the passing sessions' numbers (L, 30d, `country is US`: every one of 4.27M views read, and
-- 1.7M of them made into bitmaps). Views without a session have no country and pass no session filter.
CREATE TABLE IF NOT EXISTS sealed_page_countries (
  project_id LowCardinality(String),
  version UInt64,
  country LowCardinality(String),
  day Date,
  origin LowCardinality(String),
  path String CODEC(ZSTD(1)),
  views UInt64,
  duration_ms Int64,
  durations UInt64,
  titles Map(String, UInt64),
  sessions AggregateFunction(groupBitmap, UInt32),
  visitors AggregateFunction(groupBitmap, UInt32),
  entries UInt64,
  bounces UInt64
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (country, day, origin, path)
-- Every bitmap of a granule a request touches is read: small granules, as sealed_page_days has.
SETTINGS index_granularity = 256;
