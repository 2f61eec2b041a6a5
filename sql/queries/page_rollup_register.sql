-- A build's row in page_rollups, once its held-out sessions are written.
INSERT INTO page_rollups (project_id, version, timezone, closed_at, held_out, held_from, built_at, inserts_since, inserts)
SELECT
  {project:String}, {version:UInt64}, {timezone:String}, {closed:DateTime64(3, 'UTC')},
  (SELECT groupArray(key) FROM page_rollup_keys WHERE project_id = {project:String} AND version = {version:UInt64} AND kind = 5),
  ifNull((
    SELECT minOrNull(created_at) FROM session_timeline
    WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')} AND session_key IN (
      SELECT key FROM page_rollup_keys WHERE project_id = {project:String} AND version = {version:UInt64} AND kind = 5)
  ), {closed:DateTime64(3, 'UTC')}),
  {built:DateTime64(3, 'UTC')}, {since:DateTime64(3, 'UTC')}, {inserts:UInt64}
