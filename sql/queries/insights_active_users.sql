-- /insights/{projectId}/active_users: for each local day D of [first_day, end_day), the distinct
-- profiles (anonymous ones included) with an event on one of the {days} days ending with D.
-- Events are read from {earliest}, the start of the first day's look-back.
SELECT day AS date, uniqExactArray(profiles) AS users
FROM (
  SELECT toDate(created_at, {tz:String}) AS d, groupUniqArray(reinterpretAsUInt128(sipHash128(profile_id))) AS profiles
  FROM events
  WHERE project_id = {project:String} AND profile_id != ''
    AND created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  GROUP BY d
)
ARRAY JOIN arrayMap(n -> d + n, range({days:UInt8})) AS day
WHERE day >= {first_day:Date} AND day < {end_day:Date}
GROUP BY day
ORDER BY date {{fill}}
