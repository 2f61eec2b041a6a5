-- The events a page rollup build sums: the project's before C, of the sessions not held out
-- (kind 5, written first by page_rollup_build_held_out).
project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')}
    AND session_key NOT IN (
      SELECT key FROM page_rollup_keys WHERE project_id = {project:String} AND version = {version:UInt64} AND kind = 5)
