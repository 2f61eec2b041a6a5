-- /insights/{projectId}/active_users from its build's series (sealed_active_users, written once per
-- build, zone and `days`) for the dates before {tail_from}: C's local day, or the window's first or
-- end. Each date from there to {end_day} (one or two: C is at most a few hours old) is the union of
-- its window's day bitmaps (_profile_days.sql, read from {earliest}): one merge per date, where
-- insights_active_users_sealed.sql merges every day's bitmap into two running unions.
WITH
  {{> profile_days}}
SELECT date, users
FROM (
  SELECT date, users
  FROM sealed_active_users
  WHERE project_id = {project:String} AND version = {version:UInt64} AND stamp = {series:UInt64}
    AND date >= {first_day:Date} AND date < {tail_from:Date}
  UNION ALL
  SELECT date, groupBitmapMerge(bits) AS users
  FROM days, (SELECT {tail_from:Date} + arrayJoin(range(toUInt32({end_day:Date} - {tail_from:Date}))) AS date) AS dates
  WHERE day <= date AND day > date - {days:UInt8}
  GROUP BY date
  HAVING users > 0
)
ORDER BY date {{fill}}
