-- /insights/{projectId}/groups/{groupId}: the group's first {member_limit} member profiles, newest
-- first (ties by id).
SELECT id, first_name, last_name, email, avatar, is_external, properties, created_at, last_seen_at, groups
FROM profiles FINAL
WHERE project_id = {project:String} AND has(groups, {group:String})
ORDER BY created_at DESC, id
LIMIT {member_limit:UInt32}
