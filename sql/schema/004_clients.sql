-- Revocation writes a newer version of the row; readers use FINAL.
CREATE TABLE IF NOT EXISTS clients (
  id UUID,
  secret_hash String,
  type Enum8('read' = 1, 'write' = 2, 'root' = 3),
  project_id Nullable(String),
  organization_id String,
  name String,
  created_at DateTime64(3, 'UTC') DEFAULT now64(3),
  revoked_at Nullable(DateTime64(3, 'UTC')),
  version UInt64 DEFAULT toUnixTimestamp64Milli(now64(3))
)
ENGINE = ReplacingMergeTree(version)
ORDER BY id;
