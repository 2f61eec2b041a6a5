-- /insights/{projectId}/groups/{groupId}: the group (no row: unknown or deleted) and how many
-- members it has. A member is a profile whose `groups` holds the id (OpenPanel's assign_group),
-- whatever its events carry.
SELECT
  id, project_id, type, name, properties, created_at, version,
  (SELECT count() FROM profiles FINAL WHERE project_id = {project:String} AND has(groups, {group:String})) AS member_count
FROM groups FINAL
WHERE project_id = {project:String} AND id = {group:String} AND deleted = 0
