-- /insights/{projectId}/active_users from the sealed history: the same rows as
-- insights_active_users.sql. Whole UTC hours [hours_from, hours_to) before C come from the hourly
-- event rollups (their profiles as bitmaps of dense numbers; src/query/product/active-users.ts
-- uses this only where every local midnight is a UTC hour, so each hour lies in one local day);
-- the rest of [earliest, to) from the events, each profile by its number where it has one and by
-- its key where it has none (first seen after the build), so it is counted once across both.
-- A day's set is the union of its days' bitmaps plus the distinct keys without a number.
SELECT day AS date, groupBitmapMerge(bitmap) + uniqExactArray(unnumbered) AS users
FROM (
  SELECT d, groupBitmapMergeState(bitmap) AS bitmap, groupUniqArrayArray(unnumbered) AS unnumbered
  FROM (
    SELECT toDate(hour, {tz:String}) AS d, groupBitmapMergeState(profiles) AS bitmap, CAST([], 'Array(UInt128)') AS unnumbered
    FROM sealed_event_rollups
    WHERE project_id = {project:String} AND version = {version:UInt64} AND has_profile
      AND hour >= {hours_from:DateTime64(3, 'UTC')} AND hour < {hours_to:DateTime64(3, 'UTC')}
    GROUP BY d
    UNION ALL
    SELECT toDate(e.created_at, {tz:String}) AS d, groupBitmapStateIf(v.vno, v.vno != 0), groupUniqArrayIf(e.profile_key, v.vno = 0)
    FROM (
      SELECT created_at, reinterpretAsUInt128(sipHash128(profile_id)) AS profile_key
      FROM events
      WHERE project_id = {project:String} AND profile_id != ''
        AND ((created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {hours_from:DateTime64(3, 'UTC')})
          OR (created_at >= {hours_to:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}))
    ) AS e
    LEFT JOIN (
      SELECT profile_key, min(vno) AS vno FROM sealed_visitors
      WHERE project_id = {project:String} AND profile_key IN (
        SELECT reinterpretAsUInt128(sipHash128(profile_id)) FROM events
        WHERE project_id = {project:String} AND profile_id != ''
          AND ((created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {hours_from:DateTime64(3, 'UTC')})
            OR (created_at >= {hours_to:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}))
      )
      GROUP BY profile_key
    ) AS v USING (profile_key)
    GROUP BY d
  )
  GROUP BY d
)
ARRAY JOIN arrayMap(n -> d + n, range({days:UInt8})) AS day
WHERE day >= {first_day:Date} AND day < {end_day:Date}
GROUP BY day
ORDER BY date {{fill}}
