-- /insights/{projectId}/groups/{groupId}: the group's first {member_limit} member profiles, newest
-- first (ties by id). Properties nested at their dots, as the export's profile include has them
-- (ClickHouse's JSON type reads `address.city` as a path).
SELECT id, first_name, last_name, email, avatar, is_external, CAST(toJSONString(properties), 'JSON') AS properties,
  created_at, last_seen_at, groups
FROM profiles FINAL
WHERE project_id = {project:String} AND has(groups, {group:String})
ORDER BY created_at DESC, id
LIMIT {member_limit:UInt32}
