-- Active users' series from one build's sealed days: per local date of a zone, the distinct profiles
-- active in the `days` ending on it, for the dates whose whole window lies before C's local day.
-- Those never change under the build (an insert before C ends it; one after C reaches only later
-- dates), so the series is written once per build, zone and `days`, when a request first asks
-- (src/services/build-snapshots.ts), and later requests compute only the dates from C's day on:
-- on L, all time, merging every day's bitmap twice over in window functions was 55-60 ms of a
-- 60-70 ms statement, and twice that after a funnel's statement had run. `stamp` tells one write
-- from another (two instances writing one build). Rows go with their build, and within a day.
CREATE TABLE IF NOT EXISTS sealed_active_users (
  project_id LowCardinality(String),
  version UInt64,
  stamp UInt64,
  written_at DateTime('UTC') DEFAULT now(),
  date Date,
  users UInt32
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (stamp, date)
TTL written_at + INTERVAL 1 DAY;
