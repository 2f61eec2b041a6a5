-- The inserts logged since a point: all of them, and those that reached before C.
SELECT count() AS inserts, countIf(earliest < {closed:DateTime64(3, 'UTC')}) AS closed_inserts
FROM event_inserts
WHERE project_id = {project:String} AND logged_at >= {since:DateTime64(3, 'UTC')}
