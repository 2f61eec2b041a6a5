-- A variant of sql/queries/insights_funnel_people_sealed.sql for
-- `benchmarks/experiments/funnel-people-variants.ts --snapshot` (benchmarks/README.md, "Funnels by
-- person: level 1 from the name rollups, the rest from episodes sorted by their names"). Not shipped:
-- it reads `scratch_ns`, a copy of sealed_person_events with each episode's name mask, sorted by
-- (mask, created_at) (DDL in the README), and its `mask IN (…)` lists the L build's masks with
-- add_to_cart's bit (3 steps; 5 steps: search's bit 2, 5,7,13,…,63). Same rows as the shipped
-- statement on L, 24 % (3 steps) and 32 % (5 steps) less CPU, but not exact for a device first
-- identified after C whose anonymous events before C are not numbered in the snapshot (a look-up by
-- key that this file leaves out), and only for windows of whole UTC days.
--
-- - Level 1 or more: the step-1 name's day rollups (sealed_event_rollups), no episode read.
-- - Level 2 or more: only the episodes whose mask has step 2's bit, found by the sort key.
-- - Grouped people: each one's level added to the bitmaps under its number (the snapshot's, or its
--   own episodes'); only the link devices' numbers are subtracted. A person held only for its events
--   after C groups only its episodes that end within 24 h before C.
WITH
  (
    SELECT groupArray((toUInt64(toUnixTimestamp64Milli(created_at)), name,
      if(device_id = '', toUInt128(0), reinterpretAsUInt128(sipHash128(device_id))),
      if(profile_id = '', toUInt128(0), reinterpretAsUInt128(sipHash128(profile_id)))))
    FROM events
    WHERE project_id = {project:String} AND created_at >= {live_from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  ) AS live_events,
  live AS (SELECT e.1 AS t, e.2 AS name, e.3 AS device_key, e.4 AS profile_key FROM (SELECT arrayJoin(live_events) AS e)),
  links AS (
    SELECT device_key, argMin(profile_key, t) AS person
    FROM (
      SELECT device_key, profile_key, t FROM live
      WHERE profile_key != device_key AND profile_key != 0 AND device_key != 0
      UNION ALL
      SELECT device_key, profile_key, arrayFirst(t -> t >= {from_ms:UInt64} AND t < {to_ms:UInt64}, times) AS t
      FROM sealed_device_profiles
      WHERE project_id = {project:String} AND version = {version:UInt64}
        AND device_key IN (
          SELECT profile_key FROM sealed_person_events
          PREWHERE linked
          WHERE project_id = {project:String} AND version = {version:UInt64}
            AND created_at < {to:DateTime64(3, 'UTC')} AND ended_at >= {from:DateTime64(3, 'UTC')}
          UNION ALL
          SELECT device_key FROM live WHERE profile_key = device_key AND device_key != 0)
        AND day >= toDate({from:DateTime64(3, 'UTC')}) AND day <= toDate({to:DateTime64(3, 'UTC')}) AND t > 0
    )
    GROUP BY device_key
  ),
  (SELECT (groupArray(device_key), groupArray(person)) FROM links) AS link_map,
  (
    SELECT groupArray((if(u.e.4 = u.e.3 AND has(link_map.1, u.e.3), link_map.2[indexOf(link_map.1, u.e.3)], u.e.4),
      toUInt64(u.e.1 * 16 + 15 - indexOf({steps:Array(String)}, u.e.2))))
    FROM (SELECT arrayJoin(live_events) AS e) AS u
    WHERE u.e.2 IN {steps:Array(String)} AND u.e.4 != 0
  ) AS live_steps,
  (
    SELECT (groupArray(profile_key), groupArray(vno)) FROM (
      SELECT profile_key, any(vno) AS vno FROM sealed_live_profiles
      WHERE project_id = {project:String} AND version = {version:UInt64} AND stamp = {stamp:UInt64}
      GROUP BY profile_key)
  ) AS numbers,
  arrayFilter(n -> n != 0 AND n < 2147483648, arrayMap(d -> transform(d, numbers.1, numbers.2, toUInt32(0)), link_map.1)) AS moved,
  arrayConcat(moved, arrayFilter(n -> n != 0, arrayMap(p -> transform(p, numbers.1, numbers.2, toUInt32(0)), arrayFilter((p, d) -> has(moved, transform(d, numbers.1, numbers.2, toUInt32(0))), link_map.2, link_map.1)))) AS whole,
  held AS (
    SELECT if(e.anonymous AND has(link_map.1, e.profile_key), link_map.2[indexOf(link_map.1, e.profile_key)], e.profile_key) AS person,
      if(person = e.profile_key, e.vno, 0) AS own, e.times AS times, e.names AS names
    FROM (
      SELECT profile_key, vno, anonymous, times, names FROM sealed_person_events
      PREWHERE {grouped:Bool} OR twofold
      WHERE project_id = {project:String} AND version = {version:UInt64}
        AND created_at < {to:DateTime64(3, 'UTC')} AND ended_at >= {from:DateTime64(3, 'UTC')}
      UNION ALL
      SELECT profile_key, vno, anonymous, times, names FROM sealed_person_events
      PREWHERE length(whole) > 0 AND has(whole, vno)
      WHERE project_id = {project:String} AND version = {version:UInt64}
        AND created_at < {to:DateTime64(3, 'UTC')} AND ended_at >= {from:DateTime64(3, 'UTC')}
      UNION ALL
      SELECT profile_key, vno, anonymous, times, names FROM sealed_person_events
      WHERE project_id = {project:String} AND version = {version:UInt64}
        AND created_at < {to:DateTime64(3, 'UTC')} AND ended_at >= {from:DateTime64(3, 'UTC')}
        AND ended_at >= {live_from:DateTime64(3, 'UTC')} - INTERVAL 24 HOUR
        AND profile_key IN (SELECT arrayJoin(arrayConcat(arrayMap(s -> s.1, live_steps), link_map.1, link_map.2)))
    ) AS e
  ),
  grouped AS (
    SELECT if(own != 0, own, transform(person, numbers.1, numbers.2, toUInt32(0))) AS vno, level
    FROM (
      SELECT person, own, if(arrayExists(x -> x % 16 = 15 - {second:UInt8}, xs), arrayReduce({funnel:String}, xs, {{conditions}}), toUInt8(arrayExists(x -> x % 16 = 14, xs))) AS level
      FROM (
        SELECT person, max(own) AS own, groupArrayArray(xs) AS xs
        FROM (
          SELECT person, own, arrayFilter((x, k) -> k > 0, arrayMap((t, k) -> toUInt64(t * 16 + 15 - k), times, ks), ks) AS xs
          FROM (
            SELECT person, own, times,
              arrayMap((n, t) -> transform(n, {names:Array(String)}, {numbers:Array(UInt8)}, 0) * (t >= {from_ms:UInt64} AND t < {to_ms:UInt64}), names, times) AS ks
            FROM held
          )
          UNION ALL
          SELECT s.1, 0, [s.2] FROM (SELECT arrayJoin(live_steps) AS s)
        )
        GROUP BY person
      )
    )
    WHERE level > 0
  )
SELECT level, sum(units) AS units
FROM (
  SELECT level, bitmapCardinality(bitmapAndnot(bits, higher)) AS units
  FROM (
    SELECT level, bits, groupBitmapMergeState(bits) OVER (ORDER BY level DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS higher
    FROM (
      SELECT level, groupBitmapMergeState(bits) AS bits
      FROM (
        SELECT toUInt8(1) AS level, bitmapAndnot(groupBitmapMergeState(profiles), bitmapBuild(moved)) AS bits
        FROM sealed_event_rollups
        WHERE project_id = {project:String} AND version = {version:UInt64} AND name = {steps:Array(String)}[1]
          AND hours = 24 AND has_profile AND hour >= {from:DateTime64(3, 'UTC')} AND hour < {to:DateTime64(3, 'UTC')}
        UNION ALL
        SELECT level, bitmapAndnot(groupBitmapState(vno), bitmapBuild(moved)) AS bits
        FROM (
          SELECT vno, arrayReduce({funnel:String}, arrayMap((t, k) -> toUInt64(t * 16 + 15 - k), times, ks), {{episode_conditions}}) AS level
          FROM (
            SELECT vno, times,
              arrayMap((n, t) -> transform(n, {names:Array(String)}, {numbers:Array(UInt8)}, 0) * (t >= {from_ms:UInt64} AND t < {to_ms:UInt64}), names, times) AS ks
            FROM scratch_ns
            WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT {grouped:Bool}
              AND created_at < {to:DateTime64(3, 'UTC')} AND ended_at >= {from:DateTime64(3, 'UTC')}
              AND mask IN (3,7,11,15,19,23,27,31,35,39,43,47,51,55,59,63)
          )
        )
        WHERE level > 1
        GROUP BY level
        UNION ALL
        SELECT level, groupBitmapState(vno) FROM grouped GROUP BY level
      )
      GROUP BY level
    )
  )
)
GROUP BY level
HAVING units > 0
ORDER BY level
