-- The sessions of a build's `mixed` rows of sealed_session_events, by id (sealed_build_session_parts.sql).
session_id IN (
    SELECT id FROM sealed_sessions WHERE project_id = {project:String} AND version = {version:UInt64} AND session_key IN (
      SELECT session_key FROM sealed_session_events WHERE project_id = {project:String} AND version = {version:UInt64} AND mixed))
