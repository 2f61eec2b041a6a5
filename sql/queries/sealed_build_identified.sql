-- A build's identified rollups (sealed_identified_rollups): per UTC hour before C, the numbers of the
-- identified profiles with an event in it (sealed_build_event_visitors numbered every one of them).
INSERT INTO sealed_identified_rollups (project_id, version, hour, profiles)
SELECT {project:String}, {version:UInt64}, toStartOfHour(e.created_at) AS hour, groupBitmapState(v.vno)
FROM (
  SELECT created_at, reinterpretAsUInt128(sipHash128(profile_id)) AS profile_key
  FROM events
  WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')}
    AND profile_id != device_id AND profile_id != ''
) AS e
INNER JOIN (
  SELECT profile_key, min(vno) AS vno FROM sealed_visitors WHERE project_id = {project:String} GROUP BY profile_key
) AS v USING (profile_key)
GROUP BY hour
