LEFT ANY JOIN (
  -- The `meta` include: the project's event_meta rows as output objects, by event name.
  SELECT
    name AS meta_key,
    toUInt8(1) AS meta_found,
    CAST(
      (name, conversion, color, icon, project_id, concat(replaceOne(toString(created_at), ' ', 'T'), 'Z')),
      'Tuple(name String, conversion Bool, color String, icon String, projectId String, createdAt String)'
    ) AS meta_object
  FROM event_meta FINAL
  WHERE project_id = {project:String}
) AS m ON m.meta_key = e.name
