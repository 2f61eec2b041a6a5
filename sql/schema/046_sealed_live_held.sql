-- Funnels by person (sql/queries/insights_funnel_people_sealed.sql): what the people held by the
-- events after C need from the sealed history, written once per state of those events (`stamp`, see
-- src/services/build-planner.ts) for every window at once, so that a request reads a few thousand
-- rows instead of scanning its window twice (L, 30 days: the held part was ~470 of ~780 ms of CPU,
-- for ~1,000 episodes). By `kind`:
--   0: each event after C: `key` its device's key, `other` its profile's, `names` [its name];
--   1: the identified days before C (sealed_device_profiles) of the devices anonymous after C:
--      `key` the device, `other` the profile, `day`, `times`;
--   2: the episodes (sealed_person_events) of every profile key the rows above name: `key` the
--      profile key, `vno`, `anonymous`, `created_at`, `ended_at`, `times`, `names`.
-- A request still resolves its window itself: its links, its episodes, its steps. `linked` and
-- `twofold` episodes are not here: a window that meets them reads the episodes (person_* below).
-- Rows go with their build, and within an hour.
CREATE TABLE IF NOT EXISTS sealed_live_held (
  project_id LowCardinality(String),
  version UInt64,
  stamp UInt64,
  written_at DateTime('UTC') DEFAULT now(),
  kind UInt8,
  key UInt128,
  other UInt128,
  vno UInt32,
  anonymous Bool,
  day Date,
  created_at DateTime64(3, 'UTC'),
  ended_at DateTime64(3, 'UTC'),
  times Array(UInt64),
  names Array(LowCardinality(String))
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (stamp, kind, key)
TTL written_at + INTERVAL 1 HOUR;

-- The first start and the last end of a build's `linked` and `twofold` episodes, [] when it has
-- none: a window that misses them may read its held people from sealed_live_held. A build made
-- before this column reads as holding them all the time, and keeps the reads over the window.
ALTER TABLE sealed_builds ADD COLUMN IF NOT EXISTS person_twofold_linked Array(DateTime64(3, 'UTC'))
  DEFAULT [toDateTime64('1970-01-01 00:00:00', 3, 'UTC'), toDateTime64('2299-12-31 00:00:00', 3, 'UTC')];
