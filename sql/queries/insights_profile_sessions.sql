-- /insights/{projectId}/profiles/{profileId}/sessions: the sessions holding an event of the
-- profile (all time), newest first, each once.
SELECT {{> session_columns}}
FROM sessions FINAL
WHERE project_id = {project:String}
  AND id IN (SELECT session_id FROM events WHERE project_id = {project:String} AND profile_id = {profile:String})
ORDER BY created_at DESC, id ASC
LIMIT {limit:UInt32}
