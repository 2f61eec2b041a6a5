-- Sealed history (src/services/sealed): a project's sessions before an instant C, written once by a
-- background build in the shapes requests read, so that a window reads them without FINAL and
-- without the project's whole history, and adds only what came after C.
--
-- Every table but sealed_visitors carries the build's `version` and keeps each build of a project
-- in a partition of its own, as the page rollups do: a read names the version it was planned with,
-- and builds are dropped whole once a newer one has replaced them.

-- Dense visitor numbers per project, first seen first: exact distinct counts become roaring bitmaps
-- of small integers, which merge 40x faster than sets of 64-bit hashes and take a few bytes per
-- visitor. A number, once given, never changes: builds only number the visitors they meet for the
-- first time, so every build of a project agrees on them.
CREATE TABLE IF NOT EXISTS sealed_visitors (
  project_id String,
  profile_key UInt128,
  vno UInt32
)
ENGINE = MergeTree
ORDER BY (project_id, profile_key)
-- Requests look up the visitors of the last hour or two by the thousand: small granules keep the
-- rows read close to the rows wanted.
SETTINGS index_granularity = 1024;

-- One row per session with an event before C: what its events before C make of it. `held` marks
-- the sessions that already had events after C when the build read: requests add those events to
-- this row. Sorted by time, so a window reads its own days only.
CREATE TABLE IF NOT EXISTS sealed_sessions (
  project_id LowCardinality(String),
  version UInt64,
  created_at DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
  ended_at DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
  id String CODEC(ZSTD(1)),
  session_key UInt128,
  profile_key UInt128,
  vno UInt32,
  held Bool,
  screen_view_count UInt64,
  event_count UInt64,
  revenue UInt64,
  entry_at DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
  entry_origin LowCardinality(String),
  entry_path String CODEC(ZSTD(1)),
  exit_at DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
  exit_origin LowCardinality(String),
  exit_path String CODEC(ZSTD(1)),
  referrer String CODEC(ZSTD(1)),
  referrer_name LowCardinality(String),
  referrer_type LowCardinality(String),
  utm_source LowCardinality(String),
  utm_medium LowCardinality(String),
  utm_campaign LowCardinality(String),
  utm_term LowCardinality(String),
  utm_content LowCardinality(String),
  country LowCardinality(String),
  region LowCardinality(String),
  city LowCardinality(String),
  device LowCardinality(String),
  brand LowCardinality(String),
  model LowCardinality(String),
  browser LowCardinality(String),
  browser_version LowCardinality(String),
  os LowCardinality(String),
  os_version LowCardinality(String),
  duration UInt64 ALIAS toUInt64(dateDiff('millisecond', created_at, ended_at)),
  is_bounce UInt8 ALIAS screen_view_count <= 1
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (toDate(created_at), created_at);

-- Per period and dimension value, the sealed sessions (held ones excluded) that started in it: sums
-- that add up over periods, and the exact set of their visitors. `hours` is the period's length:
-- dimensions by UTC day (24) and again by blocks of 8 UTC days aligned on the epoch (192), so a
-- 30-day window unions 3 blocks and 6 days of bitmaps instead of 30 days (L, 30d: country 39 ->
-- 28 ms, city 53 -> 27, exit pages 90 -> 38; blocks of 4 or 16 days did less); the totals
-- (dimension '') by UTC hour (1), with the revenue events of the hour, so a /metrics series in any
-- timezone whose buckets start on the hour adds whole periods. A window's parts that are not whole
-- periods are read from sealed_sessions.
CREATE TABLE IF NOT EXISTS sealed_rollups (
  project_id LowCardinality(String),
  version UInt64,
  dimension LowCardinality(String),
  hours UInt8,
  period DateTime('UTC'),
  prefix LowCardinality(String),
  value String CODEC(ZSTD(1)),
  sessions UInt64,
  bounces UInt64,
  duration UInt64,
  pageviews UInt64,
  revenue UInt64,
  event_revenue UInt64,
  visitors AggregateFunction(groupBitmap, UInt32)
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (dimension, hours, period, prefix, value)
-- A request reads one dimension's days; every bitmap of a granule it touches is read and decoded,
-- so granules stay small (country 30d on the 3M-event demo: 20.9 ms at 8192 rows, 16.7 at 256).
SETTINGS index_granularity = 256;

-- One row per build; the newest is the project's sealed history. `inserts` is how many inserts
-- logged since `inserts_since` reached before C when it was built: another count means one came since.
-- `held_from` is the earliest start of a held session (C when there are none), where requests
-- start looking for them; `longest_ms` the longest sealed session, which bounds how long before a
-- window a session that overlaps it may have begun.
CREATE TABLE IF NOT EXISTS sealed_builds (
  project_id String,
  version UInt64,
  closed_at DateTime64(3, 'UTC'),
  held_from DateTime64(3, 'UTC'),
  longest_ms UInt64,
  built_at DateTime64(3, 'UTC'),
  inserts_since DateTime64(3, 'UTC'),
  inserts UInt64,
  sessions UInt64,
  build_ms UInt64
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (project_id, version);

-- The live sessions of a build (those with events from C on, whole), as a request computes them,
-- written once per state of the events after C (`stamp`, see src/services/build-planner.ts) so that
-- every request until the next insert reads a few hundred rows instead of joining the events after
-- C with the held sessions and the visitor numbers. Rows go with their build, and within an hour.
CREATE TABLE IF NOT EXISTS sealed_live (
  project_id LowCardinality(String),
  version UInt64,
  stamp UInt64,
  written_at DateTime('UTC') DEFAULT now(),
  created_at DateTime64(3, 'UTC'),
  id String,
  profile_key UInt128,
  vno UInt32,
  screen_view_count UInt64,
  revenue UInt64,
  duration UInt64,
  is_bounce UInt8,
  entry_origin LowCardinality(String),
  entry_path String,
  exit_origin LowCardinality(String),
  exit_path String,
  referrer String,
  referrer_name LowCardinality(String),
  referrer_type LowCardinality(String),
  utm_source LowCardinality(String),
  utm_medium LowCardinality(String),
  utm_campaign LowCardinality(String),
  utm_term LowCardinality(String),
  utm_content LowCardinality(String),
  country LowCardinality(String),
  region LowCardinality(String),
  city LowCardinality(String),
  device LowCardinality(String),
  brand LowCardinality(String),
  model LowCardinality(String),
  browser LowCardinality(String),
  browser_version LowCardinality(String),
  os LowCardinality(String),
  os_version LowCardinality(String)
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (stamp, created_at)
TTL written_at + INTERVAL 1 HOUR;
