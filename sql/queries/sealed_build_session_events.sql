-- A build's sessions with their events before C as arrays (sql/schema/021_product_sessions.sql):
-- times in ms and names, sorted by time, then name; whose events they are (025: the pair of device
-- and profile keys, `mixed` where a session has several pairs, cityHash64 of each telling them
-- apart); `linked` for sessions with an anonymous event of a device that identified itself before C.
INSERT INTO sealed_session_events (project_id, version, created_at, ended_at, session_key, times, names, device_key, profile_key, mixed, linked)
SELECT {project:String}, {version:UInt64}, {{> session_event_arrays}},
  if(any(device_id) AS row_device = '', toUInt128(0), reinterpretAsUInt128(sipHash128(row_device))),
  if(any(profile_id) AS row_profile = '', toUInt128(0), reinterpretAsUInt128(sipHash128(row_profile))),
  min(cityHash64(device_id, profile_id)) != max(cityHash64(device_id, profile_id)),
  {{> sealed_linked}}
FROM events
WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')} AND session_id != ''
GROUP BY session_id
