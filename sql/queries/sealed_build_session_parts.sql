-- The rows per person of sealed_session_events that sessions alone do not give (025): the events
-- of each session with several (device, profile) pairs, once per pair, and the events without a
-- session, per device, profile and UTC day (a day keeps the arrays short and a window's read
-- small). Run after sealed_build_session_events, whose `mixed` rows it reads, once for the events
-- without a session (`sessions`: `empty(session_id)`, which reads the ids' lengths alone) and, where
-- there are mixed rows, once for their sessions (reading every event's id: 6-9 s on L at load 7-8).
INSERT INTO sealed_session_events (project_id, version, created_at, ended_at, session_key, times, names, device_key, profile_key, part, linked)
SELECT {project:String}, {version:UInt64}, {{> session_event_arrays}},
  if(device_id AS row_device = '', toUInt128(0), reinterpretAsUInt128(sipHash128(row_device))),
  if(profile_id AS row_profile = '', toUInt128(0), reinterpretAsUInt128(sipHash128(row_profile))),
  true,
  {{> sealed_linked}}
FROM events
WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')} AND {{sessions}}
GROUP BY session_id, device_id, profile_id, if(session_id = '', toDate(created_at), toDate(0))
