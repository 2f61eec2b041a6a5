-- /insights/{projectId}/live: distinct visitors with any event in the five minutes before now.
SELECT uniqExact(profile_id) AS visitors
FROM events
WHERE project_id = {project:String}
  AND profile_id != ''
  AND created_at >= {now:DateTime64(3, 'UTC')} - INTERVAL 5 MINUTE
  AND created_at <= {now:DateTime64(3, 'UTC')}
