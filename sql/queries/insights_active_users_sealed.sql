-- /insights/{projectId}/active_users from the sealed history: the rows of insights_active_users.sql
-- from the daily bitmaps of every profile (_profile_days.sql), each day from the first with a sealed
-- profile (or {earliest_day}) on given a row (an empty one where nobody came). The days fall into
-- blocks of {days}; each day's running unions within its block, from the block's start and to the
-- block's end, are one pass each way, and the window of {days} ending on a day is the union of two
-- of them (the previous block's from the window's first day on, and this block's up to the day):
-- three bitmap unions a day instead of {days}. `days` is read once: a CTE is computed where named.
WITH
  {{> profile_days}},
  dense AS (
    SELECT day, groupBitmapMergeState(bits) AS bits
    FROM (
      SELECT day, bits FROM days
      UNION ALL
      SELECT first + arrayJoin(range(toUInt32(greatest({end_day:Date}, first) - first))) AS day, groupBitmapStateIf(toUInt32(0), false) AS bits
      FROM (
        SELECT greatest({earliest_day:Date}, toDate(ifNull(minOrNull(period), {hours_to:DateTime64(3, 'UTC')}), {tz:String})) AS first
        FROM sealed_profile_rollups
        WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT identified AND hours = 1
          AND period >= {hours_from:DateTime64(3, 'UTC')} AND period < {hours_to:DateTime64(3, 'UTC')}
      )
      GROUP BY day
    )
    GROUP BY day
  ),
  runs AS (
    SELECT day,
      groupBitmapMergeState(bits) OVER (PARTITION BY block ORDER BY day ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS upto,
      groupBitmapMergeState(bits) OVER (PARTITION BY block ORDER BY day DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS onward
    FROM (SELECT day, bits, intDiv(day - min(day) OVER (), {days:UInt8}) AS block FROM dense)
  )
SELECT date, users
FROM (
  SELECT day AS date, bitmapOrCardinality(upto, lagInFrame(onward, {lag:UInt8}) OVER (ORDER BY day ROWS BETWEEN {lag:UInt8} PRECEDING AND CURRENT ROW)) AS users
  FROM runs
)
WHERE date >= {first_day:Date} AND users > 0
ORDER BY date {{fill}}
