-- The whole UTC days before C of a build's profile rollups, merged from their hours.
INSERT INTO sealed_profile_rollups (project_id, version, identified, hours, period, profiles)
SELECT {project:String}, {version:UInt64}, identified, 24, toStartOfDay(period) AS day, groupBitmapMergeState(profiles)
FROM sealed_profile_rollups
WHERE project_id = {project:String} AND version = {version:UInt64} AND hours = 1
  AND toStartOfDay(period) + INTERVAL 1 DAY <= {closed:DateTime64(3, 'UTC')}
GROUP BY identified, day
