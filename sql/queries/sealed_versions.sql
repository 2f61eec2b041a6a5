-- The builds of a project stored before a given one, whether registered or left by a build that
-- did not finish: the versions found in any sealed table. `versions` holds one
-- `SELECT version FROM <table> WHERE project_id = {project:String} AND version < {keep:UInt64}`
-- per table of SEALED_TABLES (src/services/sealed/builder.ts), so a new table cannot be missed here.
SELECT DISTINCT version
FROM (
  {{versions}}
)
