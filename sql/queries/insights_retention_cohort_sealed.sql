-- /insights/{projectId}/retention/cohort from the sealed history: the rows of
-- insights_retention_cohort.sql from the weekly bitmaps of _identified_days.sql. A cohort is a
-- window week's profiles not seen in an earlier week of the window; retained[k] those of them seen
-- in some week k or more weeks later. Only windows ending on a Monday, or after the last event,
-- come here, so a window week holds no activity from after the window.
WITH
  {{> identified_days}},
  unions AS (
    SELECT ws, bs,
      arrayMap(i -> arrayFold((acc, b) -> bitmapOr(acc, b), arraySlice(bs, 1, i - 1), bitmapBuild(CAST([], 'Array(UInt32)'))), arrayEnumerate(bs)) AS before,
      arrayMap(i -> arrayFold((acc, b) -> bitmapOr(acc, b), arraySlice(bs, i), bitmapBuild(CAST([], 'Array(UInt32)'))), arrayEnumerate(bs)) AS after
    FROM weeks
  )
SELECT cohort_interval, bitmapCardinality(cohort) AS size,
  arrayMap(j -> if(j = 0, toUInt64(0), bitmapAndCardinality(cohort, after[j])), arrayMap(k -> arrayFirstIndex(w -> w >= week + 7 * k, ws), range({columns:UInt16}))) AS retained
FROM (
  SELECT ws, after, ws[i] AS week, toString(ws[i]) AS cohort_interval, bitmapAndnot(bs[i], before[i]) AS cohort
  FROM unions
  ARRAY JOIN arrayEnumerate(ws) AS i
  WHERE ws[i] < {to_week:Date}
)
WHERE size > 0
ORDER BY cohort_interval
