-- /insights/{projectId}/sessions: the sessions begun in the window that pass the filters, newest
-- first (OpenPanel has no ORDER BY here), each once (FINAL merges its partial rows).
SELECT {{> session_columns}}
FROM sessions FINAL
WHERE project_id = {project:String}
  AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  {{conditions}}
ORDER BY created_at DESC, id ASC
LIMIT {limit:UInt32}
