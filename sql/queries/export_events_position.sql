-- /export/events?after=<id>: the instant of that event, if it is one of the export's events (the
-- predicate of the list), as the keyset position a resumed stream starts after. The inner query
-- reads the raw columns: an output alias `id` would capture the name the predicate compares.
SELECT toString(created_at) AS createdAt, toString(found_id) AS id
FROM (
  SELECT created_at, id AS found_id
  FROM events
  WHERE {{predicate}}
    AND id = {position_id:UUID}
  LIMIT 1
)
