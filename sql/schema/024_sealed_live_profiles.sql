-- The profiles of the events after C as retention, cohorts, active users and engagement add them
-- to the sealed profile rollups (sql/queries/_profile_days.sql), written once per state of the
-- events after C (`stamp`, see src/services/build-planner.ts) beside sealed_live. Each numbered
-- profile's number otherwise comes from sealed_visitors by key on every request: on L its ~1,300
-- keys after C fall on most of its granules, 80 of active users' ~160 ms. One row per profile, UTC
-- hour and whether the events were identified (profile_id != device_id); `first_at` is the hour's
-- earliest such event, so a window ending inside the hour keeps the profile exactly when it came
-- before the end. `vno` is the sealed number, or one from 2^31 on for a profile first seen after C.
-- Rows go with their build, and within an hour.
CREATE TABLE IF NOT EXISTS sealed_live_profiles (
  project_id LowCardinality(String),
  version UInt64,
  stamp UInt64,
  written_at DateTime('UTC') DEFAULT now(),
  identified Bool,
  hour DateTime('UTC'),
  first_at DateTime64(3, 'UTC'),
  vno UInt32
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (stamp, hour)
TTL written_at + INTERVAL 1 HOUR;
