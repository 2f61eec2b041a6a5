-- Sessions of a build that events from C on now continue while its tables took them as whole:
-- sealed sessions not held (looked up by key: sql/schema/054_sealed_session_keys.sql); and, for its
-- page tables, any event after C of a session whose last event before C is a view (kind 3), a view
-- after C of any other (kind 4). Events are read from
-- `from` on: C, or later when the planner checked the events before it (build-planner.ts). Both
-- kinds of page keys in one read: each subquery costs M ~5 ms to plan whatever it reads.
SELECT
  (SELECT count() FROM sealed_session_keys
    WHERE project_id = {project:String} AND version = {version:UInt64}
      AND session_key IN (
        SELECT reinterpretAsUInt128(sipHash128(session_id)) FROM events
        WHERE project_id = {project:String} AND created_at >= {from:DateTime64(3, 'UTC')} AND session_id != ''))
  + (SELECT count() FROM sealed_page_keys
    WHERE project_id = {project:String} AND version = {version:UInt64} AND (kind, key) IN (
      SELECT arrayJoin(if(is_view, [3, 4], [3])), session_key FROM session_timeline
      WHERE project_id = {project:String} AND created_at >= {from:DateTime64(3, 'UTC')}))
  AS crossing
