-- /insights/{projectId}/profiles/{profileId} recentEvents: the profile's latest events (its own
-- profile_id, all time) as raw rows, newest first.
SELECT *
FROM events
WHERE project_id = {project:String} AND profile_id = {profile:String}
ORDER BY created_at DESC, id ASC
LIMIT {limit:UInt32}
