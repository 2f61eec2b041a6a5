-- Product analytics on the sealed history (src/query/product/sealed-product.ts): per UTC hour
-- before C, the identified profiles (profile_id != device_id) with an event in it, as a bitmap of
-- their dense numbers (sealed_visitors numbers every profile of an event before C). Retention,
-- cohorts and engagement union these per local day and week instead of reading every event of the
-- project. Versioned like the other sealed tables: a build's rows are a partition of their own.
CREATE TABLE IF NOT EXISTS sealed_identified_rollups (
  project_id LowCardinality(String),
  version UInt64,
  hour DateTime('UTC'),
  profiles AggregateFunction(groupBitmap, UInt32)
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY hour
SETTINGS index_granularity = 256;
