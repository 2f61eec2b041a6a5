-- Funnels by person (groupBy=profile_id) on the sealed history (src/query/product/sealed-units.ts,
-- sql/queries/insights_funnel_people_sealed.sql). 025 wrote whose events each session row holds, and
-- requests grouped a window's rows by person: on L (30 days) 1.49M rows into 1.08M people with
-- their step events and windowFunnel on them, 1.1 s of CPU of the 1.76 s statement, against ~0.5 s
-- for the whole funnel per session. Here a build writes each person's events before C cut where
-- they pause for more than a day (`episodes`): no windowFunnel chain of a window of up to a day
-- spans two of them, so such a funnel's level for a person is the highest of its episodes' levels,
-- each computed as a session's is, and the people are counted as bitmaps of their dense numbers,
-- without grouping any arrays (L, 3 steps: 857 against 1,717 ms of CPU, load 3.4).

-- One row per episode of a profile's events before C, anonymous ones (profile_id = device_id) apart
-- from identified ones: a request moves a device's anonymous events to the profile the device
-- identified as in the window. `vno` is the profile's number (sealed_visitors); `linked` marks
-- anonymous episodes of a device with an identified event before C (sealed_device_profiles), the
-- only ones whose device a request looks up; `twofold` the episodes of a profile that has both
-- kinds, which may interleave in time and are grouped by the request. Times and names are sorted
-- by time, then name, as sealed_session_events has them.
CREATE TABLE IF NOT EXISTS sealed_person_events (
  project_id LowCardinality(String),
  version UInt64,
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
ORDER BY created_at;

-- The identified events before C (profile_id != device_id, both set) per UTC day, device and
-- profile, their times sorted: where a request finds the profile a device identified as first in
-- its window. Sorted by day: a request looks up a thousand devices or so (those of the anonymous
-- events after C) among its window's days; by device, the primary key's analysis of such a set
-- took longer than reading the window's keys (L, 929 devices: 44 against 7 ms of CPU).
CREATE TABLE IF NOT EXISTS sealed_device_profiles (
  project_id LowCardinality(String),
  version UInt64,
  day Date,
  device_key UInt128,
  profile_key UInt128,
  times Array(UInt64) CODEC(T64, LZ4)
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (day, device_key);

-- 025's columns: no statement reads them now, and builds no longer write rows per person there.
ALTER TABLE sealed_session_events
  DROP COLUMN IF EXISTS device_key,
  DROP COLUMN IF EXISTS profile_key,
  DROP COLUMN IF EXISTS mixed,
  DROP COLUMN IF EXISTS part,
  DROP COLUMN IF EXISTS linked;
