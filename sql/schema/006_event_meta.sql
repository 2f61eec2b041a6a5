CREATE TABLE IF NOT EXISTS event_meta (
  project_id String,
  name String,
  conversion Bool DEFAULT false,
  color String,
  icon String,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(created_at)
ORDER BY (project_id, name);
