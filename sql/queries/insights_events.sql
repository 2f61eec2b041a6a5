-- /insights/{projectId}/events: the window's events as raw rows under the table's column names,
-- newest first. OpenPanel has no ORDER BY here (which rows a LIMIT kept was unspecified); the
-- sort spells out the table's key so that ClickHouse reads in reverse key order and stops early.
SELECT *
FROM events
WHERE project_id = {project:String}
  AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  {{conditions}}
ORDER BY toDate(created_at) DESC, created_at DESC, id ASC
LIMIT {limit:UInt32}
