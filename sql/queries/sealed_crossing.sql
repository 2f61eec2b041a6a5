-- Sealed sessions, not held, that events from C on now continue: their sealed rows no longer hold
-- the whole session.
SELECT count() AS crossing
FROM sealed_sessions
WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held
  AND session_key IN (
    SELECT reinterpretAsUInt128(sipHash128(session_id)) FROM events
    WHERE project_id = {project:String} AND created_at >= {closed:DateTime64(3, 'UTC')} AND session_id != ''
  )
