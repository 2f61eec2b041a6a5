-- The visitors of each page before C, counted by their last day (kind 2, written just before).
INSERT INTO page_rollup_days (project_id, version, day, origin, path, visitors)
SELECT {project:String}, {version:UInt64}, day, origin, path, count()
FROM page_rollup_keys
WHERE project_id = {project:String} AND version = {version:UInt64} AND kind = 2
GROUP BY day, origin, path
