-- A build's event rollups by UTC half hour (sealed_event_halves): the events before C by half hour
-- and name, with the numbers of their profiles (sealed_build_event_visitors numbered every one of
-- them). The hours are merged from them (sealed_build_events).
INSERT INTO sealed_event_halves (project_id, version, name, half, has_profile, events, profiles)
SELECT {project:String}, {version:UInt64}, e.name, toStartOfInterval(e.created_at, INTERVAL 30 MINUTE) AS half, e.profile_id != '' AS has_profile,
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
