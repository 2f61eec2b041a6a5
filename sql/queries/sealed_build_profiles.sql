-- A build's profile rollups (sealed_profile_rollups), by UTC hour before C: the numbers of every
-- profile with an event in it, and of the identified ones (sealed_build_event_visitors numbered
-- every one of them).
INSERT INTO sealed_profile_rollups (project_id, version, identified, hours, period, profiles)
SELECT {project:String}, {version:UInt64}, kind.1, 1, hour, kind.2
FROM (
  SELECT toStartOfHour(e.created_at) AS hour, groupBitmapState(v.vno) AS everyone, groupBitmapStateIf(v.vno, e.identified) AS identified
  FROM (
    SELECT created_at, profile_id != device_id AS identified, reinterpretAsUInt128(sipHash128(profile_id)) AS profile_key
    FROM events
    WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')} AND profile_id != ''
  ) AS e
  INNER JOIN (
    SELECT profile_key, min(vno) AS vno FROM sealed_visitors WHERE project_id = {project:String} GROUP BY profile_key
  ) AS v USING (profile_key)
  GROUP BY hour
)
ARRAY JOIN [(false, everyone), (true, identified)] AS kind
WHERE bitmapCardinality(kind.2) > 0
