CREATE TABLE IF NOT EXISTS projects (
  id String,
  organization_id String,
  name String,
  timezone String DEFAULT 'UTC',
  created_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree
ORDER BY id;
