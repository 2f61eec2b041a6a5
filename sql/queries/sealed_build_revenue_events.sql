-- The revenue events of a build's sessions sealed whole, with their session's number
-- (sql/schema/028_sealed_revenue_events.sql). Those of held sessions are read live.
INSERT INTO sealed_revenue_events (project_id, version, created_at, sno, revenue)
SELECT {project:String}, {version:UInt64}, e.created_at, n.sno, e.revenue
FROM (
  SELECT created_at, revenue, reinterpretAsUInt128(sipHash128(session_id)) AS session_key
  FROM events
  WHERE project_id = {project:String} AND name = 'revenue' AND created_at < {closed:DateTime64(3, 'UTC')} AND session_id != ''
) AS e
INNER JOIN (
  SELECT session_key, sno FROM sealed_sessions WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held AND revenue > 0
) AS n USING (session_key)
