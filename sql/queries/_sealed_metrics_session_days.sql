-- The sealed part of a /metrics window filtered on events' names, origins or paths alone, when whole
-- UTC days [session_days_from, session_days_to) are all of it: each day's sessions from
-- sealed_session_days, those that pass picked by a mask of the filters' condition on their number
-- (`session_filters`, on `sno`), instead of the window's rows of sealed_sessions.
  UNION ALL
  SELECT if(created_at >= {from:DateTime64(3, 'UTC')}, 0, 1) AS period, {{bucket}} AS bucket,
    sum(arrayCount(mask)), sum(arraySum((x, m) -> x * m, bounces, mask)), sum(arraySum((x, m) -> x * m, durations, mask)), sum({{day_views}}), toUInt64(0),
    groupBitmapMergeState(bitmapBuild(arrayFilter((x, m) -> m, vnos, mask))), CAST([], 'Array(UInt128)')
  FROM (
    SELECT toDateTime64(day, 3, 'UTC') AS created_at, arrayMap(sno -> 1 {{session_filters}}, snos) AS mask, vnos, durations, views, bounces
    FROM sealed_session_days
    WHERE project_id = {project:String} AND version = {version:UInt64}
      AND day >= toDate({session_days_from:DateTime64(3, 'UTC')}) AND day < toDate({session_days_to:DateTime64(3, 'UTC')})
  )
  GROUP BY period, bucket
