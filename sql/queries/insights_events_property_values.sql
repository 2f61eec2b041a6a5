-- /insights/{projectId}/events/property_values: the distinct non-empty values of one property of
-- one event name, most recently seen first, over all time.
SELECT value
FROM (
  SELECT properties[{key:String}] AS value, max(created_at) AS last_seen
  FROM events
  WHERE project_id = {project:String} AND name = {event:String} AND properties[{key:String}] != ''
  GROUP BY value
)
ORDER BY last_seen DESC, value ASC
LIMIT 200
