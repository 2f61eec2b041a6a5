-- /insights/{projectId}/events/names: the project's 50 most frequent event names over all time,
-- by their exact number of events (OpenPanel ranks by how many insert batches held the name).
SELECT name
FROM events
WHERE project_id = {project:String}
GROUP BY name
ORDER BY count() DESC, name ASC
LIMIT 50
