-- Each dimension's day rows counted by the visitors' last day (see sealed_rollup_last): the union of
-- a value's bitmaps from each day to C, less the same union from the next day on. The blocks are
-- the sums of their days (sealed_build_rollup_last_blocks.sql).
INSERT INTO sealed_rollup_last (project_id, version, dimension, hours, period, prefix, value, visitors_last)
SELECT {project:String}, {version:UInt64}, dimension, 24, period, prefix, value, since - lagInFrame(since, 1, 0) OVER later
FROM (
  SELECT dimension, period, prefix, value, groupBitmapMerge(visitors) OVER later AS since
  FROM sealed_rollups
  WHERE project_id = {project:String} AND version = {version:UInt64} AND hours = 24
  WINDOW later AS (PARTITION BY dimension, prefix, value ORDER BY period DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
WINDOW later AS (PARTITION BY dimension, prefix, value ORDER BY period DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
