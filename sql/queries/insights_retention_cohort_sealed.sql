-- /insights/{projectId}/retention/cohort from the sealed history: the rows of
-- insights_retention_cohort.sql from the weekly bitmaps of _profile_days.sql. A cohort is a
-- window week's profiles not in the union of the weeks before it; retained[k] those of them in the
-- union of the weeks from k weeks later on. Both unions are running ones (a pass each way over the
-- weeks). Only windows ending on a Monday, or after the last event, come here, so a window week
-- holds no activity from after the window.
WITH
  {{> profile_days}},
  unions AS (
    SELECT groupArray(week) AS ws, groupArray(bitmapAndnot(bits, before)) AS cohorts, groupArray(onward) AS onwards
    FROM (
      SELECT week, bits,
        groupBitmapMergeState(bits) OVER (ORDER BY week ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before,
        groupBitmapMergeState(bits) OVER (ORDER BY week DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS onward
      FROM (SELECT toMonday(day) AS week, groupBitmapMergeState(bits) AS bits FROM days GROUP BY week)
      ORDER BY week
    )
  )
SELECT toString(ws[i]) AS cohort_interval, bitmapCardinality(cohorts[i]) AS size,
  arrayMap(j -> if(j = 0, toUInt64(0), bitmapAndCardinality(cohorts[i], onwards[j])), arrayMap(k -> arrayFirstIndex(w -> w >= ws[i] + 7 * k, ws), range({columns:UInt16}))) AS retained
FROM unions
ARRAY JOIN arrayEnumerate(ws) AS i
WHERE ws[i] < {to_week:Date} AND size > 0
ORDER BY cohort_interval
