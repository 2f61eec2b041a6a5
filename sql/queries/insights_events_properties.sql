-- /insights/{projectId}/events/properties: every property key with a non-empty value, per event
-- name (or of one event name), over all time. OpenPanel's view leaves out the two keys below.
SELECT DISTINCT key AS property_key, name AS event_name
FROM events
ARRAY JOIN mapKeys(mapFilter((k, v) -> v != '' AND k NOT IN ('__duration_from', '__properties_from'), properties)) AS key
WHERE project_id = {project:String}
  AND (isNull({event:Nullable(String)}) OR name = {event:Nullable(String)})
ORDER BY property_key ASC, event_name ASC
LIMIT 500
