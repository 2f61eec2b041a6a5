-- /insights/{projectId}/groups/types: the distinct types of the project's groups, in order.
SELECT DISTINCT type
FROM groups FINAL
WHERE project_id = {project:String} AND deleted = 0
ORDER BY type
