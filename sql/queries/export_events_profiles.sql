LEFT ANY JOIN (
  -- The `profile` include: the project's profiles as OpenPanel's profile objects, by id
  -- ({{profile_type}}: the tuple's names and types, declared in src/query/event-columns.ts).
  SELECT
    id AS profile_key,
    toUInt8(1) AS profile_found,
    CAST(
      (id, email, avatar, first_name, last_name,
       concat(replaceOne(toString(created_at), ' ', 'T'), 'Z'),
       concat(replaceOne(toString(last_seen_at), ' ', 'T'), 'Z'),
       is_external, project_id, groups, toJSONString(properties)),
      {{profile_type}}
    ) AS profile_object
  FROM profiles FINAL
  WHERE project_id = {project:String} {{scope}}
) AS pr ON pr.profile_key = e.profile_id
