-- The events a build's page tables sum: the project's before C, of the sessions not held out
-- (kind 5, written first by sealed_build_page_held).
project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')}
    AND session_key NOT IN (
      SELECT key FROM sealed_page_keys WHERE project_id = {project:String} AND version = {version:UInt64} AND kind = 5)
