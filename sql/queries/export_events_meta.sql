LEFT ANY JOIN (
  -- The `meta` include: the project's event_meta rows as output objects, by event name. Quarry
  -- keeps one instant per row, when it was last written (the table's version): createdAt and
  -- updatedAt both carry it. The id is derived from the project and the name, so it is stable.
  SELECT
    name AS meta_key,
    toUInt8(1) AS meta_found,
    CAST(
      (toString(reinterpretAsUUID(sipHash128(project_id, name))), name, conversion, color, icon, project_id,
       concat(replaceOne(toString(created_at), ' ', 'T'), 'Z'),
       concat(replaceOne(toString(created_at), ' ', 'T'), 'Z')),
      'Tuple(id String, name String, conversion Bool, color String, icon String, projectId String, createdAt String, updatedAt String)'
    ) AS meta_object
  FROM event_meta FINAL
  WHERE project_id = {project:String}
) AS m ON m.meta_key = e.name
