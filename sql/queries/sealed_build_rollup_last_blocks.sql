-- The 8-day blocks of sealed_rollup_last, aligned as sealed_build_merged.sql aligns the rollups':
-- a visitor's last day is in one block, so a block's count is the sum of its days'.
INSERT INTO sealed_rollup_last (project_id, version, dimension, hours, period, prefix, value, visitors_last)
SELECT {project:String}, {version:UInt64}, dimension, 192, toDateTime(intDiv(toUInt32(period), 192 * 3600) * (192 * 3600), 'UTC') AS block,
  prefix, value, sum(visitors_last)
FROM sealed_rollup_last
WHERE project_id = {project:String} AND version = {version:UInt64} AND hours = 24
GROUP BY dimension, block, prefix, value
