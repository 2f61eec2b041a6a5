-- /insights/{projectId}/groups: the project's groups, newest first (ties by id), optionally of one
-- type and whose name or id contains {search} (case-insensitive, the text as written: no wildcards).
SELECT id, project_id, type, name, properties, created_at, version
FROM groups FINAL
WHERE project_id = {project:String} AND deleted = 0
  AND (isNull({type:Nullable(String)}) OR type = {type:Nullable(String)})
  AND (isNull({search:Nullable(String)})
    OR positionCaseInsensitiveUTF8(name, assumeNotNull({search:Nullable(String)})) > 0
    OR positionCaseInsensitiveUTF8(id, assumeNotNull({search:Nullable(String)})) > 0)
ORDER BY created_at DESC, id
LIMIT {limit:UInt32}
