-- /export/events?after=<id>: the instant of that event, if it is one of the export's events (the
-- predicate of the list), as the keyset position a resumed stream starts after.
SELECT toString(created_at) AS createdAt, toString(id) AS id
FROM events
WHERE {{predicate}}
  AND id = {position_id:UUID}
LIMIT 1
