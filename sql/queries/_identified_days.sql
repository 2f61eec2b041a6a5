-- The identified profiles active on each local day of [earliest, to), as bitmaps of dense numbers:
-- the sealed hours [hours_from, hours_to) from sealed_identified_rollups (each hour lies in one local
-- day: src/query/product/sealed-product.ts checks the timezone), the rest from the events. A profile
-- of those events takes its sealed number, or, first seen after the build, one past the numbers
-- given (in key order), so that every profile is one number in every bitmap.
  tail AS (
    SELECT created_at, reinterpretAsUInt128(sipHash128(profile_id)) AS profile_key
    FROM events
    WHERE project_id = {project:String} AND profile_id != device_id AND profile_id != ''
      AND ((created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {hours_from:DateTime64(3, 'UTC')})
        OR (created_at >= {hours_to:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}))
  ),
  known AS (
    SELECT profile_key, min(vno) AS vno FROM sealed_visitors
    WHERE project_id = {project:String} AND profile_key IN (SELECT profile_key FROM tail)
    GROUP BY profile_key
  ),
  numbered AS (
    SELECT profile_key, vno FROM known
    UNION ALL
    SELECT profile_key, toUInt32(ifNull((SELECT max(vno) FROM sealed_visitors WHERE project_id = {project:String}), 0) + row_number() OVER (ORDER BY profile_key))
    FROM (SELECT DISTINCT profile_key FROM tail WHERE profile_key NOT IN (SELECT profile_key FROM known))
  ),
  days AS (
    SELECT day, groupBitmapMergeState(bits) AS bits
    FROM (
      SELECT toDate(hour, {tz:String}) AS day, groupBitmapMergeState(profiles) AS bits
      FROM sealed_identified_rollups
      WHERE project_id = {project:String} AND version = {version:UInt64}
        AND hour >= {hours_from:DateTime64(3, 'UTC')} AND hour < {hours_to:DateTime64(3, 'UTC')}
      GROUP BY day
      UNION ALL
      SELECT toDate(t.created_at, {tz:String}) AS day, groupBitmapState(n.vno) AS bits
      FROM tail AS t INNER JOIN numbered AS n USING (profile_key)
      GROUP BY day
    )
    GROUP BY day
  ),
  weeks AS (
    SELECT groupArray(week) AS ws, groupArray(bits) AS bs
    FROM (SELECT toMonday(day) AS week, groupBitmapMergeState(bits) AS bits FROM days GROUP BY week ORDER BY week)
  )
