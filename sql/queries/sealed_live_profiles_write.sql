-- The profiles of the events after C with their numbers, written for one state of those events
-- (see sealed_live_profiles): what _profile_numbered.sql computes per request, for every window
-- and timezone at once, so that requests read a few thousand rows instead of sealed_visitors' index
-- (charts too, by key).
INSERT INTO sealed_live_profiles (project_id, version, stamp, identified, hour, first_at, vno, profile_key)
WITH
  after AS (
    SELECT reinterpretAsUInt128(sipHash128(profile_id)) AS profile_key, profile_id != device_id AS identified,
      toStartOfHour(created_at) AS hour, min(created_at) AS first_at
    FROM events
    WHERE project_id = {project:String} AND created_at >= {closed:DateTime64(3, 'UTC')} AND profile_id != ''
    GROUP BY profile_key, identified, hour
  ),
  profiled AS (SELECT profile_key FROM after),
  numbers AS ({{> live_profile_numbers}}
  )
SELECT {project:String}, {version:UInt64}, {stamp:UInt64}, a.identified, a.hour, a.first_at, n.vno, a.profile_key
FROM after AS a
INNER JOIN numbers AS n USING (profile_key)
