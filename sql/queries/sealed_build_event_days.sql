-- A build's event rollups by UTC day, merged from its hours (sealed_build_events): the day of C
-- holds only its hours before C, as the hours do.
INSERT INTO sealed_event_rollups (project_id, version, name, hours, hour, has_profile, events, profiles)
SELECT {project:String}, {version:UInt64}, name, 24, toStartOfDay(hour) AS day, has_profile, sum(events), groupBitmapMergeState(profiles)
FROM sealed_event_rollups
WHERE project_id = {project:String} AND version = {version:UInt64} AND hours = 1
GROUP BY name, day, has_profile
