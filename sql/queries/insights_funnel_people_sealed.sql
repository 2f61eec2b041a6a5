-- /insights/{projectId}/funnel?groupBy=profile_id from the sealed history (src/query/product/sealed-units.ts):
-- the levels of insights_funnel.sql per person, from the window's rows of sealed_session_events
-- (each of one device and profile, sql/schema/025_sealed_session_people.sql) and the events from C
-- on, instead of grouping the window's events by person. As there, a person is the events' profile
-- or, for anonymous events, the profile their device identified as first in the window (`links`:
-- the first identified event in the window of each device that has anonymous events, from the
-- rows of identified events of the devices `linked` or anonymous after C, and the events after C;
-- ties of time may pick another profile than the events' argMin, which takes either). A row begun
-- in the window has its first time there as `created_at`: only rows across the window's start read
-- their times, so that a few hundred candidate rows do not read the times of every granule they
-- fall on (L, 30 days: the links 368 → 180 ms of CPU). Persons are
-- sipHash128 keys of profiles. Each row's step events in the window are encoded as in
-- insights_funnel.sql, times in 1/16 ms less the step number (`xs`; the step is 15 - x % 16).
-- Only persons with an event of the second step run windowFunnel, over all their step events in
-- the window: the others reach level 1 at most, had they an event of the first step.
--
-- Fragment slots: conditions, windowFunnel's conditions over `xs` (`arrayMap(x -> x % 16 = 15 - j, xs)`,
-- j the step name's first index among the steps).
WITH
  live AS (
    SELECT toUInt64(toUnixTimestamp64Milli(created_at)) AS t, name,
      if(device_id = '', toUInt128(0), reinterpretAsUInt128(sipHash128(device_id))) AS device_key,
      if(profile_id = '', toUInt128(0), reinterpretAsUInt128(sipHash128(profile_id))) AS profile_key
    FROM events
    WHERE project_id = {project:String} AND created_at >= {live_from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  ),
  sealed AS (
    SELECT times, names, device_key, profile_key, linked
    FROM sealed_session_events
    WHERE project_id = {project:String} AND version = {version:UInt64}
      AND created_at < {to:DateTime64(3, 'UTC')} AND ended_at >= {from:DateTime64(3, 'UTC')} AND NOT mixed
  ),
  candidates AS (
    SELECT device_key FROM sealed WHERE linked
    UNION ALL
    SELECT device_key FROM live WHERE profile_key = device_key AND device_key != 0
  ),
  links AS (
    SELECT device_key, argMin(profile_key, t) AS person
    FROM (
      SELECT device_key, profile_key, t FROM live
      WHERE profile_key != device_key AND profile_key != 0 AND device_key != 0
      UNION ALL
      SELECT device_key, profile_key, toUInt64(toUnixTimestamp64Milli(created_at)) AS t
      FROM sealed_session_events
      PREWHERE device_key IN candidates
      WHERE project_id = {project:String} AND version = {version:UInt64}
        AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')} AND NOT mixed
        AND profile_key != device_key AND profile_key != 0
      UNION ALL
      SELECT device_key, profile_key, times[arrayFirstIndex(t -> t >= {from_ms:UInt64} AND t < {to_ms:UInt64}, times) AS i] AS t
      FROM sealed_session_events
      PREWHERE device_key IN candidates
      WHERE project_id = {project:String} AND version = {version:UInt64}
        AND created_at < {from:DateTime64(3, 'UTC')} AND ended_at >= {from:DateTime64(3, 'UTC')} AND NOT mixed
        AND profile_key != device_key AND profile_key != 0 AND i > 0
    )
    GROUP BY device_key
  ),
  parts AS (
    SELECT if(u.profile_key = u.device_key AND l.person != 0, l.person, u.profile_key) AS person, xs,
      has(ks, 1) AS first, has(ks, {second:UInt8}) AS second
    FROM (
      SELECT device_key, profile_key, ks, arrayFilter((x, k) -> k > 0, arrayMap((t, k) -> toUInt64(t * 16 + 15 - k), times, ks), ks) AS xs
      FROM (
        SELECT device_key, profile_key, times,
          arrayMap((n, t) -> transform(n, {names:Array(String)}, {numbers:Array(UInt8)}, 0) * (t >= {from_ms:UInt64} AND t < {to_ms:UInt64}), names, times) AS ks
        FROM sealed
        WHERE profile_key != 0 AND hasAny(names, {names:Array(String)})
      )
      WHERE notEmpty(xs)
      UNION ALL
      SELECT device_key, profile_key, [k] AS ks, [toUInt64(t * 16 + 15 - k)] AS xs
      FROM (SELECT device_key, profile_key, t, toUInt8(indexOf({steps:Array(String)}, name)) AS k FROM live WHERE name IN {steps:Array(String)} AND profile_key != 0)
    ) AS u
    LEFT JOIN links AS l ON l.device_key = u.device_key
  )
SELECT level, count() AS units
FROM (
  SELECT if(second, arrayReduce({funnel:String}, xs, {{conditions}}), toUInt8(first)) AS level
  FROM (SELECT max(first) AS first, max(second) AS second, groupArrayArray(xs) AS xs FROM parts GROUP BY person)
)
WHERE level > 0
GROUP BY level
ORDER BY level
