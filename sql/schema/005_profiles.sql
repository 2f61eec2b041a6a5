CREATE TABLE IF NOT EXISTS profiles (
  id String,
  project_id String,
  is_external Bool DEFAULT false,
  first_name String,
  last_name String,
  email String,
  avatar String,
  properties Map(String, String),
  created_at DateTime64(3, 'UTC'),
  last_seen_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(last_seen_at)
ORDER BY (project_id, id);
