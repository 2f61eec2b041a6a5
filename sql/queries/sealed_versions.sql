-- The builds of a project stored before a given one, whether registered or left by a build that
-- did not finish.
SELECT DISTINCT version
FROM (
  SELECT version FROM sealed_sessions WHERE project_id = {project:String} AND version < {keep:UInt64}
  UNION ALL
  SELECT version FROM sealed_rollups WHERE project_id = {project:String} AND version < {keep:UInt64}
  UNION ALL
  SELECT version FROM sealed_event_rollups WHERE project_id = {project:String} AND version < {keep:UInt64}
  UNION ALL
  SELECT version FROM sealed_live WHERE project_id = {project:String} AND version < {keep:UInt64}
  UNION ALL
  SELECT version FROM sealed_builds WHERE project_id = {project:String} AND version < {keep:UInt64}
)
