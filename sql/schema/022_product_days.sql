-- Product analytics on the sealed history (src/query/product/sealed-product.ts, active-users.ts):
-- per period before C, the profiles with an event in it as a bitmap of their dense numbers
-- (sealed_visitors numbers every profile of an event before C). `identified` rows hold the
-- identified profiles only (profile_id != device_id: retention, cohorts, engagement), the others
-- every profile (active users). `hours` is the period: every UTC hour (1), and every whole UTC day
-- (24), so that a request in UTC unions one bitmap per day and one in another timezone takes the
-- days that lie in one of its local days whole and the hours of the rest. 020's hourly identified
-- rollups read 2,160 bitmaps for the L project's 90 days, and active users read the hourly event
-- rollups of every event name: this table replaces both for these routes.
CREATE TABLE IF NOT EXISTS sealed_profile_rollups (
  project_id LowCardinality(String),
  version UInt64,
  identified Bool,
  hours UInt8,
  period DateTime('UTC'),
  profiles AggregateFunction(groupBitmap, UInt32)
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (identified, hours, period)
SETTINGS index_granularity = 256;

DROP TABLE IF EXISTS sealed_identified_rollups;
