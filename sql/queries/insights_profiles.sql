-- /insights/{projectId}/profiles: the project's stored profiles that pass the conditions, by
-- first seen (created_at) in {{direction}} order; the id breaks ties, which OpenPanel leaves open.
SELECT {{> profile_columns}}
FROM profiles FINAL
WHERE project_id = {project:String}
  {{conditions}}
ORDER BY created_at {{direction}}, id {{direction}}
LIMIT {limit:UInt32}
