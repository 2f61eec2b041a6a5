-- One row per tracked event, with OpenPanel's column names so its exports load unchanged.
-- country is LowCardinality(String) rather than OpenPanel's FixedString(2): an unknown country
-- is then '' instead of two NUL bytes.
CREATE TABLE IF NOT EXISTS events (
  id UUID DEFAULT generateUUIDv4(),
  name LowCardinality(String),
  device_id String CODEC(ZSTD(1)),
  profile_id String CODEC(ZSTD(1)),
  project_id String CODEC(ZSTD(1)),
  session_id String CODEC(ZSTD(1)),
  created_at DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
  path String CODEC(ZSTD(1)),
  origin LowCardinality(String),
  referrer String CODEC(ZSTD(1)),
  referrer_name LowCardinality(String),
  referrer_type LowCardinality(String),
  duration UInt64,
  revenue UInt64,
  properties Map(String, String) CODEC(ZSTD(1)),
  country LowCardinality(String),
  city LowCardinality(String),
  region LowCardinality(String),
  longitude Nullable(Float32),
  latitude Nullable(Float32),
  os LowCardinality(String),
  os_version LowCardinality(String),
  browser LowCardinality(String),
  browser_version LowCardinality(String),
  device LowCardinality(String),
  brand LowCardinality(String),
  model LowCardinality(String),
  sdk_name LowCardinality(String),
  sdk_version LowCardinality(String),
  imported_at Nullable(DateTime('UTC'))
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(created_at)
-- id last: it makes (created_at, id) a total order for keyset pagination.
ORDER BY (project_id, toDate(created_at), created_at, id);
