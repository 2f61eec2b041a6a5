-- The profiles active on each local day of [earliest, to), or each local week where {{bucket}} is
-- toMonday rather than toDate, as bitmaps of dense numbers: identified ones only where
-- {identified}, else every profile. Sealed periods inside [hours_from, hours_to) come from
-- sealed_profile_rollups: a UTC day where it lies in one local day (or week) whole, else its hours
-- (each hour lies in one local day: src/query/product/sealed-product.ts checks the timezone), so a
-- week in a zone off UTC days is 6 days and 24 hours, not 168 hours; the rest from the events. A profile of those events takes its sealed number, or, first seen after
-- the build, one from 2^31 on (sealed numbers count visitors, far below), so that every profile is
-- one number in every bitmap without reading the project's highest number.
  tail AS (
    SELECT reinterpretAsUInt128(sipHash128(profile_id)) AS profile_key, groupUniqArray({{bucket}}(created_at, {tz:String})) AS days
    FROM events
    WHERE project_id = {project:String} AND profile_id != '' AND (profile_id != device_id OR NOT {identified:Bool})
      AND ((created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {hours_from:DateTime64(3, 'UTC')})
        OR (created_at >= {hours_to:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}))
    GROUP BY profile_key
  ),
  numbered AS (
    SELECT t.days AS days, if(v.vno != 0, v.vno, toUInt32(2147483648 + row_number() OVER (ORDER BY t.profile_key))) AS vno
    FROM tail AS t
    LEFT JOIN (
      SELECT profile_key, min(vno) AS vno FROM sealed_visitors
      WHERE project_id = {project:String} AND profile_key IN (SELECT profile_key FROM tail)
      GROUP BY profile_key
    ) AS v USING (profile_key)
  ),
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
      ARRAY JOIN days AS day
      GROUP BY day
    )
    GROUP BY day
  ),
  weeks AS (
    SELECT groupArray(week) AS ws, groupArray(bits) AS bs
    FROM (SELECT toMonday(day) AS week, groupBitmapMergeState(bits) AS bits FROM days GROUP BY week ORDER BY week)
  )
