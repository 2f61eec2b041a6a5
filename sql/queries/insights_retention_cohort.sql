-- /insights/{projectId}/retention/cohort: identified profiles by the week (Monday, request's
-- timezone) of their first activity inside [from, to); values[k] counts those active in some week
-- k or more weeks after it ("on or after"), from activity read until {activity_to}.
SELECT toString(cohort) AS cohort_interval, count() AS size,
  sumForEach(arrayMap(k -> toUInt64(intDiv(dateDiff('day', cohort, last_week), 7) >= k), range({columns:UInt16}))) AS retained
FROM (
  SELECT profile_id,
    toMonday(minIf(created_at, created_at < {to:DateTime64(3, 'UTC')}), {tz:String}) AS cohort,
    toMonday(max(created_at), {tz:String}) AS last_week
  FROM events
  WHERE project_id = {project:String}
    AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {activity_to:DateTime64(3, 'UTC')}
    AND profile_id != device_id AND profile_id != ''
    {{filters}}
  GROUP BY profile_id
  HAVING countIf(created_at < {to:DateTime64(3, 'UTC')}) > 0
)
GROUP BY cohort
ORDER BY cohort
