-- The builds of a project stored before a given one, whether registered or left by a build that
-- did not finish.
SELECT DISTINCT version
FROM (
  SELECT version FROM page_rollup_days WHERE project_id = {project:String} AND version < {keep:UInt64}
  UNION ALL
  SELECT version FROM page_rollup_keys WHERE project_id = {project:String} AND version < {keep:UInt64}
  UNION ALL
  SELECT version FROM page_rollups WHERE project_id = {project:String} AND version < {keep:UInt64}
)
