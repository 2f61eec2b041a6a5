-- The profiles active on each local day of [earliest, to), or each local week where {{bucket}} is
-- toMonday rather than toDate, as bitmaps of dense numbers: identified ones only where
-- {identified}, else every profile. Sealed periods inside [hours_from, hours_to) come from
-- sealed_profile_rollups: a UTC day where it lies in one local day (or week) whole, else its hours
-- (each hour lies in one local day: src/query/product/sealed-product.ts checks the timezone), so a
-- week in a zone off UTC days is 6 days and 24 hours, not 168 hours; the rest is `numbered`: each
-- profile's days and number there (_profile_numbered.sql, or _profile_numbered_snapshot.sql where
-- the planner wrote them for the events after C as they are).
  {{numbered}},
  days AS (
    SELECT day, groupBitmapMergeState(bits) AS bits
    FROM (
      SELECT {{bucket}}(period, {tz:String}) AS day, groupBitmapMergeState(profiles) AS bits
      FROM sealed_profile_rollups
      WHERE project_id = {project:String} AND version = {version:UInt64} AND identified = {identified:Bool}
        AND period >= {hours_from:DateTime64(3, 'UTC')} AND period < {hours_to:DateTime64(3, 'UTC')}
        AND (hours = 24) = ((toStartOfDay(period) AS utc_day) >= {hours_from:DateTime64(3, 'UTC')}
          AND utc_day + INTERVAL 1 DAY <= {hours_to:DateTime64(3, 'UTC')}
          AND {{bucket}}(utc_day, {tz:String}) = {{bucket}}(utc_day + INTERVAL 86399 SECOND, {tz:String}))
      GROUP BY day
      UNION ALL
      SELECT day, groupBitmapState(vno) AS bits
      FROM numbered
      GROUP BY day
    )
    GROUP BY day
  ),
  weeks AS (
    SELECT groupArray(week) AS ws, groupArray(bits) AS bs
    FROM (SELECT toMonday(day) AS week, groupBitmapMergeState(bits) AS bits FROM days GROUP BY week ORDER BY week)
  )
