-- Sessions of a rollup that events after its C now tie to what came before, as
-- page_rollup_build_held_out would have held them out: any event after C of a session whose last
-- event before C is a view (kind 3), a view after C of any other (kind 4).
SELECT
  (SELECT count() FROM page_rollup_keys
    WHERE project_id = {project:String} AND version = {version:UInt64} AND kind = 3 AND key IN (
      SELECT session_key FROM session_timeline
      WHERE project_id = {project:String} AND created_at >= {closed:DateTime64(3, 'UTC')}))
  + (SELECT count() FROM page_rollup_keys
    WHERE project_id = {project:String} AND version = {version:UInt64} AND kind = 4 AND key IN (
      SELECT session_key FROM session_timeline
      WHERE project_id = {project:String} AND is_view AND created_at >= {closed:DateTime64(3, 'UTC')}))
  AS crossing
