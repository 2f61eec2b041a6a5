LEFT ANY JOIN (
  -- The `profile` include: the project's profiles as output objects, by id.
  SELECT
    id AS profile_key,
    toUInt8(1) AS profile_found,
    CAST(
      (id, is_external, first_name, last_name, email, avatar, properties,
       concat(replaceOne(toString(created_at), ' ', 'T'), 'Z'),
       concat(replaceOne(toString(last_seen_at), ' ', 'T'), 'Z'),
       project_id),
      'Tuple(id String, isExternal Bool, firstName String, lastName String, email String, avatar String, properties Map(String, String), createdAt String, lastSeenAt String, projectId String)'
    ) AS profile_object
  FROM profiles FINAL
  WHERE project_id = {project:String} {{scope}}
) AS pr ON pr.profile_key = e.profile_id
