-- /insights/{projectId}/engagement from the sealed history: the rows of insights_engagement.sql from
-- the daily bitmaps of _identified_days.sql: each profile's last local day, and the days since.
WITH
  {{> identified_days}}
SELECT dateDiff('day', last_day, {today:Date}) AS days, count() AS users
FROM (
  SELECT vno, max(day) AS last_day
  FROM (SELECT day, arrayJoin(bitmapToArray(bits)) AS vno FROM days)
  GROUP BY vno
)
GROUP BY days
ORDER BY days
