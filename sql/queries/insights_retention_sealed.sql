-- /insights/{projectId}/retention from the sealed history: the rows of insights_retention.sql from
-- the weekly bitmaps of _identified_days.sql: a week's profiles, and those also in the next week.
WITH
  {{> identified_days}}
SELECT toString(ws[i]) AS date, bitmapCardinality(bs[i]) AS active_users,
  if((indexOf(ws, ws[i] + 7) AS next) = 0, toUInt64(0), bitmapAndCardinality(bs[i], bs[next])) AS retained_users
FROM weeks
ARRAY JOIN arrayEnumerate(ws) AS i
ORDER BY ws[i]
