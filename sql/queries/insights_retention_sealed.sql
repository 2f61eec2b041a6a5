-- /insights/{projectId}/retention from the sealed history: the rows of insights_retention.sql from
-- the weekly bitmaps of _profile_days.sql: a week's profiles, and those also in the next week.
WITH
  {{> profile_days}}
SELECT r.1 AS date, r.2 AS active_users, r.3 AS retained_users
FROM weeks
ARRAY JOIN arrayMap(i -> (toString(ws[i]), bitmapCardinality(bs[i]), if((indexOf(ws, ws[i] + 7) AS next) = 0, toUInt64(0), bitmapAndCardinality(bs[i], bs[next]))), arrayEnumerate(ws)) AS r
ORDER BY date
