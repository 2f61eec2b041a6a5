-- A build's event rollups (sealed_event_rollups): the events before C by UTC hour and name, with the
-- numbers of their profiles, merged from its half hours (sealed_build_event_halves) as the days are
-- merged from the hours: one pass over the events for both (L: ~9 s of CPU less per build).
INSERT INTO sealed_event_rollups (project_id, version, name, hour, has_profile, events, profiles)
SELECT {project:String}, {version:UInt64}, name, toStartOfHour(half) AS hour, has_profile, sum(events), groupBitmapMergeState(profiles)
FROM sealed_event_halves
WHERE project_id = {project:String} AND version = {version:UInt64}
GROUP BY name, hour, has_profile
