-- A build's event rollups (sealed_event_rollups): the events before C by UTC hour and name, with the
-- numbers of their profiles (sealed_build_event_visitors numbered every one of them).
INSERT INTO sealed_event_rollups (project_id, version, name, hour, has_profile, events, profiles)
SELECT {project:String}, {version:UInt64}, e.name, toStartOfHour(e.created_at) AS hour, e.profile_id != '' AS has_profile,
  count(), groupBitmapStateIf(v.vno, e.profile_id != '')
FROM (
  SELECT name, created_at, profile_id, reinterpretAsUInt128(sipHash128(profile_id)) AS profile_key
  FROM events
  WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')}
) AS e
LEFT JOIN (
  SELECT profile_key, min(vno) AS vno FROM sealed_visitors WHERE project_id = {project:String} GROUP BY profile_key
) AS v USING (profile_key)
GROUP BY e.name, hour, has_profile
