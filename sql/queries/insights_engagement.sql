-- /insights/{projectId}/engagement: identified profiles by the number of local calendar days
-- between their last event ever and {today} (the request's timezone).
SELECT dateDiff('day', toDate(last_seen, {tz:String}), {today:Date}) AS days, count() AS users
FROM (
  SELECT profile_id, max(created_at) AS last_seen
  FROM events
  WHERE project_id = {project:String} AND profile_id != device_id AND profile_id != ''
  GROUP BY profile_id
)
GROUP BY days
ORDER BY days
