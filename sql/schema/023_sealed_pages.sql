-- /pages in the sealed history (src/query/sealed-pages.ts). The page rollups of 011 were a second
-- mechanism beside the sealed tier, with their own build, C and planner, and answered only windows
-- that start at a midnight of the project's own zone and reach the present. Here a build's views
-- carry dense numbers (of their session, per build, and of their visitor, sealed_visitors), so a
-- page's sessions and visitors over any span are unions of roaring bitmaps: whole UTC days from the
-- day rows, the rest of the window (a zone's midnight, an ISO instant) from the views themselves.
--
-- Every table carries the build's `version` and keeps each build of a project in a partition of its
-- own, like the rest of the sealed history (sql/schema/012_sealed.sql).

-- Each view before C of a session not held out (kind 5 below), sorted by time: `sno` is its
-- session's number, so a day's sessions are close numbers (since 027, sealed_sessions.sno; 0 for
-- views without a session); `vno` is the viewer's number (0 for the empty profile when it has none); `duration_ms`
-- runs to the session's next event, NULL when the view is its session's last.
CREATE TABLE IF NOT EXISTS sealed_page_views (
  project_id LowCardinality(String),
  version UInt64,
  created_at DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
  origin LowCardinality(String),
  path String CODEC(ZSTD(1)),
  title String CODEC(ZSTD(1)),
  sno UInt32 CODEC(T64, ZSTD(1)),
  vno UInt32,
  duration_ms Nullable(Int64)
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY created_at;

-- Per UTC day and page, what its views and the sessions that started that day make of it: sums
-- that add up over days, titles counted, the sets of session and visitor numbers, and the sessions
-- entering on the page and how many of them bounced; and the same again by blocks of 8 days aligned
-- on the epoch's days (`days` 8, `day` their first), as sealed_rollups has them: visitors come back,
-- so a day's visitor numbers spread over the whole history and merging them is most of a request's
-- work (5M-event project, 30d: 82 of 100 ms for the bitmaps of 200 pages over 30 days). C's own day
-- and block hold what came before C.
CREATE TABLE IF NOT EXISTS sealed_page_days (
  project_id LowCardinality(String),
  version UInt64,
  days UInt8,
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
ORDER BY (days, day, origin, path)
-- Every bitmap of a granule a request touches is read: small granules, as sealed_rollups has.
SETTINGS index_granularity = 256;

-- The sessions a build checks events after C against, by kind:
--   3  its last event before C is a view (any event after C would end that view);
--   4  every other session with events before C (a view after C would change its counts);
--   5  held out: it already spanned C with its last event before C a view, or a view after C, when
--      built. Requests read these few sessions whole, from their first event.
CREATE TABLE IF NOT EXISTS sealed_page_keys (
  project_id LowCardinality(String),
  version UInt64,
  kind UInt8,
  key UInt128
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
-- Not by key: keys are looked up by the thousand (IN a set), which no index narrows.
ORDER BY kind;

-- The held-out sessions of a build and their first event (C when there are none), read with it.
ALTER TABLE sealed_builds ADD COLUMN IF NOT EXISTS page_held Array(UInt128) DEFAULT [];

ALTER TABLE sealed_builds ADD COLUMN IF NOT EXISTS page_held_from DateTime64(3, 'UTC') DEFAULT closed_at;

-- The page rollups' own tables; event_inserts (011) stays, every build checks inserts with it.
DROP TABLE IF EXISTS page_rollup_days;

DROP TABLE IF EXISTS page_rollup_keys;

DROP TABLE IF EXISTS page_rollups;

-- What /pages adds after C for a build (sql/queries/_sealed_live_pages.sql), written once per state
-- of the events after C under the planner's stamp, as sealed_live is, so that requests until the
-- next insert read a few thousand rows instead of the events after C, the held-out sessions, the
-- successor of each view and the numbers of its visitors (5M-event project: 80 of a 30-day
-- request's 174 ms). Kind 1: a view, with its time on page and its visitor's number (`known` 0 for
-- a visitor first seen after C). Kind 2: a session with views, at its start, on its entry page.
CREATE TABLE IF NOT EXISTS sealed_live_pages (
  project_id LowCardinality(String),
  version UInt64,
  stamp UInt64,
  written_at DateTime('UTC') DEFAULT now(),
  kind UInt8,
  created_at DateTime64(3, 'UTC'),
  origin LowCardinality(String),
  path String,
  title String,
  session_key UInt128,
  profile_key UInt128,
  vno UInt32,
  known UInt8,
  duration_ms Nullable(Int64),
  views UInt64
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (stamp, kind, created_at)
TTL written_at + INTERVAL 1 HOUR;
