-- Values Quarry generates once and keeps with the data, such as the cursor signing key when
-- QUARRY_SECRET is not set; every instance on the same database then signs alike.
CREATE TABLE IF NOT EXISTS quarry_settings (
  name String,
  value String,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
ORDER BY (name, created_at);
