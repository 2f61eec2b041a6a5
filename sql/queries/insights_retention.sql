-- /insights/{projectId}/retention: per week (starting Monday in the request's timezone) the
-- identified profiles active in it, and how many of them were active the week after too. Only
-- events inside [from, to) count, so the window's last week retains nobody.
SELECT toString(week) AS date, count() AS active_users, countIf(has(weeks, week + 7)) AS retained_users
FROM (
  SELECT profile_id, groupUniqArray(toMonday(created_at, {tz:String})) AS weeks
  FROM events
  WHERE project_id = {project:String}
    AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
    AND profile_id != device_id AND profile_id != ''
    {{filters}}
  GROUP BY profile_id
)
ARRAY JOIN weeks AS week
GROUP BY week
ORDER BY week
