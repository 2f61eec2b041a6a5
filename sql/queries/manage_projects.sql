-- /manage/projects (and /manage/projects/{id} with an id): the projects of the client's
-- organization, newest first as OpenPanel lists them.
SELECT id, name, organization_id, timezone, created_at
FROM projects FINAL
WHERE organization_id = {organization:String}
  AND (isNull({id:Nullable(String)}) OR id = {id:Nullable(String)})
ORDER BY created_at DESC, id
