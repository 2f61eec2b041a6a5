-- A build's event rollups by UTC half hour (`hours` 0; sealed_build_events writes the hours): a zone
-- offset by half an hour (Asia/Kolkata) starts its days and hours on the half hour, and a chart reads
-- the halves of the hours it splits instead of their events (L, 30 days in Kolkata: the events of
-- 30 split hours and the numbers of their profiles were ~400 of the statement's ~600 ms of CPU).
INSERT INTO sealed_event_rollups (project_id, version, name, hours, hour, has_profile, events, profiles)
SELECT {project:String}, {version:UInt64}, e.name, 0, toStartOfInterval(e.created_at, INTERVAL 30 MINUTE) AS half, e.profile_id != '' AS has_profile,
  count(), groupBitmapStateIf(v.vno, e.profile_id != '')
FROM (
  SELECT name, created_at, profile_id, reinterpretAsUInt128(sipHash128(profile_id)) AS profile_key
  FROM events
  WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')}
) AS e
LEFT JOIN (
  SELECT profile_key, min(vno) AS vno FROM sealed_visitors WHERE project_id = {project:String} GROUP BY profile_key
) AS v USING (profile_key)
GROUP BY e.name, half, has_profile
