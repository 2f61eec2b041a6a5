-- /pages before an instant C, built once and read instead of every view (src/query/page-rollups.ts).
-- Exact time on page needs each view's successor in its session, and exact sessions and visitors
-- need every view's ids: over the 1M-event demo that is 400-500 ms however the views are laid out
-- (benchmarks/README.md, Levers). A rollup holds what came before C (the start of an hour) by local
-- day, in parts that add up, and a request adds what came after C, which is an hour or two.
--
-- Every table carries the build's `version` and keeps each build of a project in a partition of
-- its own: a read names the version it was planned with, a build is compacted to one part per
-- table once written, and builds are removed whole (DROP PARTITION), only those older than the one
-- a new build replaces, so a read in flight keeps its rows.

-- Per local day before C (the last one ends at C) and page, in rows that add up: the views, the
-- distinct sessions of that day, the time on page summed (and how many views had a successor),
-- the titles counted; `repeats`, the sessions that viewed the page again on a later day, by the
-- earlier day (so a session counted on several days of a window is taken back as often as it
-- repeats from a day of that window on); `visitors`, the visitors whose last view of the page
-- before C fell that day (so the visitors from day D to C add up from D on); and the sessions that
-- started that day entering on the page, and how many of them bounced.
CREATE TABLE IF NOT EXISTS page_rollup_days (
  project_id String,
  version UInt64,
  day Date,
  origin LowCardinality(String),
  path String,
  views UInt64,
  sessions UInt64,
  repeats UInt64,
  visitors UInt64,
  duration_ms Int64,
  durations UInt64,
  titles Map(String, UInt64),
  entries UInt64,
  bounces UInt64
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (project_id, version, day, origin, path);

-- The keys a request looks up:
--   kind 2  a visitor of the page, with the last day before C they viewed it (`day`), keyed by the
--           hash of page and visitor: the visitors read after C are looked up here;
--   kind 3  a session whose last event before C is a view (an event after C would end that view);
--   kind 4  every other session with events before C (a view after C would change its counts);
--   kind 5  a session held out of the rollup because it already spanned C when it was built;
--           requests read these few sessions whole.
CREATE TABLE IF NOT EXISTS page_rollup_keys (
  project_id String,
  version UInt64,
  kind UInt8,
  day Date,
  origin LowCardinality(String),
  path String,
  key UInt128
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
-- Not by key: keys are looked up by the thousand (IN a set), which no index narrows to fewer
-- granules, and analysing the index against such a set took longer than reading (51 vs 29 ms).
ORDER BY (project_id, version, kind, day);

-- One row per build; the newest is the project's rollup. `held_out` lists the held-out sessions
-- and `held_from` is their first event (C when there are none). `inserts` is how many inserts
-- logged since `inserts_since` reached before C when it was built: another count means one came since.
CREATE TABLE IF NOT EXISTS page_rollups (
  project_id String,
  version UInt64,
  timezone String,
  closed_at DateTime64(3, 'UTC'),
  held_out Array(UInt128),
  held_from DateTime64(3, 'UTC'),
  built_at DateTime64(3, 'UTC'),
  inserts_since DateTime64(3, 'UTC'),
  inserts UInt64
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (project_id, version);

-- Each insert block into events, by project: its earliest event and when it arrived. An insert
-- reaching before a rollup's C after the rollup was built means the rollup no longer holds.
CREATE TABLE IF NOT EXISTS event_inserts (
  project_id String,
  earliest DateTime64(3, 'UTC'),
  logged_at DateTime64(3, 'UTC')
)
ENGINE = MergeTree
ORDER BY (project_id, logged_at)
TTL toDateTime(logged_at) + INTERVAL 30 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS event_inserts_mv TO event_inserts AS
SELECT project_id, min(created_at) AS earliest, now64(3) AS logged_at
FROM events
GROUP BY project_id;
