-- The keys of the build's sessions sealed whole (held ones excluded), for sealed_crossing's lookup
-- (sql/schema/054_sealed_session_keys.sql).
INSERT INTO sealed_session_keys (project_id, version, session_key)
SELECT {project:String}, {version:UInt64}, session_key
FROM sealed_sessions
WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held
