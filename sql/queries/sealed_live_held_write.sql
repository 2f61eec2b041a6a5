-- What the people held by the events after C need, written for one state of those events (see
-- sql/schema/046_sealed_live_held.sql): the keys as insights_funnel_people_sealed.sql hashes them.
-- The links' devices are every device anonymous after C and their candidates every profile they
-- identified as before C, on any day, so that any window's links are among them.
INSERT INTO sealed_live_held (project_id, version, stamp, kind, key, other, vno, anonymous, day, created_at, ended_at, times, names)
WITH
  after AS (
    SELECT created_at, name,
      if(device_id = '', toUInt128(0), reinterpretAsUInt128(sipHash128(device_id))) AS device_key,
      if(profile_id = '', toUInt128(0), reinterpretAsUInt128(sipHash128(profile_id))) AS profile_key
    FROM events
    WHERE project_id = {project:String} AND created_at >= {closed:DateTime64(3, 'UTC')}
  ),
  candidates AS (
    SELECT day, device_key, profile_key, times
    FROM sealed_device_profiles
    WHERE project_id = {project:String} AND version = {version:UInt64}
      AND device_key IN (SELECT device_key FROM after WHERE profile_key = device_key AND device_key != 0)
      AND day >= toDate({held_from:DateTime64(3, 'UTC')})
  )
SELECT {project:String}, {version:UInt64}, {stamp:UInt64}, toUInt8(0), device_key, profile_key, toUInt32(0), false, toDate(created_at), created_at, created_at,
  CAST([], 'Array(UInt64)'), CAST([name], 'Array(LowCardinality(String))')
FROM after
UNION ALL
SELECT {project:String}, {version:UInt64}, {stamp:UInt64}, toUInt8(1), device_key, profile_key, toUInt32(0), false, day, toDateTime64(0, 3, 'UTC'), toDateTime64(0, 3, 'UTC'),
  times, CAST([], 'Array(LowCardinality(String))')
FROM candidates
UNION ALL
SELECT {project:String}, {version:UInt64}, {stamp:UInt64}, toUInt8(2), profile_key, toUInt128(0), vno, anonymous, toDate(created_at), created_at, ended_at, times, names
FROM sealed_person_events
WHERE project_id = {project:String} AND version = {version:UInt64} AND ended_at >= {held_from:DateTime64(3, 'UTC')}
  AND profile_key IN (
    SELECT device_key FROM after WHERE device_key != 0
    UNION ALL SELECT profile_key FROM after WHERE profile_key != 0
    UNION ALL SELECT profile_key FROM candidates)
