-- /insights/{projectId}/engagement from the sealed history: the rows of insights_engagement.sql from
-- the daily bitmaps of _profile_days.sql. A profile's last local day is the one it is in and no
-- later day is: a day's count is its profiles less those in the union of the days after it (one
-- running union, latest day first), instead of every profile's numbers grouped.
WITH
  {{> profile_days}}
SELECT dateDiff('day', day, {today:Date}) AS days, bitmapCardinality(bits) - bitmapAndCardinality(bits, later) AS users
FROM (
  SELECT day, bits, groupBitmapMergeState(bits) OVER (ORDER BY day DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS later
  FROM days
)
WHERE users > 0
ORDER BY days
