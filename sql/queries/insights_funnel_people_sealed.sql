-- /insights/{projectId}/funnel?groupBy=profile_id from the sealed history (src/query/product/sealed-units.ts):
-- the levels of insights_funnel.sql per person, from the episodes of each profile's events before C
-- (sql/schema/030_sealed_person_events.sql) and the events from C on. As there, a person is the
-- events' profile or, for anonymous events, the profile their device identified as first in the
-- window (`links`: the device's first identified event in the window, looked up by device for the
-- devices of `linked` episodes and of anonymous events after C, and among the events after C; ties
-- of time may pick another profile than the events' argMin, which takes either).
--
-- `held`: the episodes of the people whose level needs their events together: those of a link
-- (either side), of events after C, of a `twofold` profile, or everyone where {grouped} (a funnel
-- window longer than the build's episode gap). Their step events are encoded as in
-- insights_funnel.sql, times in 1/16 ms less the step number (`xs`; the step is 15 - x % 16), and
-- grouped by person. Everyone else's episodes are never within a window of each other: each
-- episode's level is computed as a session's is (insights_funnel_sealed.sql), and a person's level
-- is the highest of them, counted per level as bitmaps of the profiles' numbers (people with a
-- level L and none higher), less the numbers of the held episodes' profiles. Level 1 or more is
-- having an event of step 1 in the window: where {rollups} (the window's edges on UTC hours, or its
-- end at or after C), the step-1 name's rollups of the whole UTC days inside it and of its other
-- hours, else the episodes. Only the episodes whose mask has step 2's bit (migration 042; the
-- masks found by the sort key) can be at level 2 or more, so only they get windowFunnel (L, 30
-- days: 15 % of the episodes).
--
-- The held people's inputs (`held_sources`: the events after C, the devices' identified days to
-- link, the held episodes) come from _funnel_people_held.sql, or from their snapshot
-- (_funnel_people_held_snapshot.sql) where the planner wrote one and the window allows it.
--
-- The events after C, the links and the held people's levels are scalar subqueries: a CTE is
-- computed again wherever it is named (the links, named three times, cost 160-190 ms of CPU each
-- on L at load 6-8; the statement 1,550 ms of CPU with CTEs, 1,056 with scalars).
--
-- Fragment slots: conditions, windowFunnel's conditions over `xs` (`arrayMap(x -> x % 16 = 15 - j, xs)`);
-- episode_conditions, the same over an episode's step numbers `ks` (`arrayMap(k -> k = j, ks)`);
-- j the step name's first index among the steps.
WITH
{{held_sources}}
  live AS (SELECT e.1 AS t, e.2 AS name, e.3 AS device_key, e.4 AS profile_key FROM (SELECT arrayJoin(live_events) AS e)),
  links AS (
    SELECT device_key, argMin(profile_key, t) AS person
    FROM (
      SELECT device_key, profile_key, t FROM live
      WHERE profile_key != device_key AND profile_key != 0 AND device_key != 0
      UNION ALL
      SELECT device_key, profile_key, arrayFirst(t -> t >= {from_ms:UInt64} AND t < {to_ms:UInt64}, times) AS t
      FROM candidates
      WHERE t > 0
    )
    GROUP BY device_key
  ),
  (SELECT (groupArray(device_key), groupArray(person)) FROM links) AS link_map,
  linked_to AS (SELECT l.1 AS device_key, l.2 AS person FROM (SELECT arrayJoin(arrayZip(link_map.1, link_map.2)) AS l)),
  held AS (
    SELECT if(e.anonymous AND l.person != 0, l.person, e.profile_key) AS person, e.vno AS vno, e.times AS times, e.names AS names
    FROM episodes AS e
    LEFT JOIN linked_to AS l ON l.device_key = e.profile_key
  ),
  (
    SELECT (groupBitmapMergeState(bits), groupArrayIf(level, level > 0))
    FROM (
      SELECT bits, if(arrayExists(x -> x % 16 = 15 - {second:UInt8}, xs), arrayReduce({funnel:String}, xs, {{conditions}}), toUInt8(arrayExists(x -> x % 16 = 14, xs))) AS level
      FROM (
        SELECT groupBitmapState(vno) AS bits, groupArrayArray(xs) AS xs
        FROM (
          SELECT person, vno, arrayFilter((x, k) -> k > 0, arrayMap((t, k) -> toUInt64(t * 16 + 15 - k), times, ks), ks) AS xs
          FROM (
            SELECT person, vno, times,
              arrayMap((n, t) -> transform(n, {names:Array(String)}, {numbers:Array(UInt8)}, 0) * (t >= {from_ms:UInt64} AND t < {to_ms:UInt64}), names, times) AS ks
            FROM held
          )
          UNION ALL
          SELECT if(u.profile_key = u.device_key AND l.person != 0, l.person, u.profile_key), 0, [toUInt64(u.t * 16 + 15 - indexOf({steps:Array(String)}, u.name))]
          FROM (SELECT * FROM live WHERE name IN {steps:Array(String)} AND profile_key != 0) AS u
          LEFT JOIN linked_to AS l ON l.device_key = u.device_key
        )
        GROUP BY person
      )
    )
  ) AS grouped_people
SELECT level, sum(units) AS units
FROM (
  SELECT level, bitmapCardinality(bitmapAndnot(bitmapAndnot(bits, higher), grouped_people.1)) AS units
  FROM (
    SELECT level, bits, groupBitmapMergeState(bits) OVER (ORDER BY level DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS higher
    FROM (
      SELECT level, groupBitmapMergeState(bits) AS bits
      FROM (
        SELECT toUInt8(1) AS level, groupBitmapMergeState(profiles) AS bits
        FROM sealed_event_rollups
        WHERE project_id = {project:String} AND version = {version:UInt64} AND {rollups:Bool} AND NOT {grouped:Bool}
          AND name = {steps:Array(String)}[1] AND has_profile
          AND hour >= {from:DateTime64(3, 'UTC')} AND hour < {to:DateTime64(3, 'UTC')}
          AND if(hour >= {days_from:DateTime64(3, 'UTC')} AND hour < {days_to:DateTime64(3, 'UTC')}, hours = 24, hours = 1)
        UNION ALL
        SELECT toUInt8(1), groupBitmapState(vno)
        FROM sealed_person_events
        WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT {rollups:Bool} AND NOT {grouped:Bool}
          AND created_at < {to:DateTime64(3, 'UTC')} AND ended_at >= {from:DateTime64(3, 'UTC')}
          AND arrayExists((n, t) -> n = {steps:Array(String)}[1] AND t >= {from_ms:UInt64} AND t < {to_ms:UInt64}, names, times)
        UNION ALL
        SELECT level, groupBitmapState(vno)
        FROM (
          SELECT vno, arrayReduce({funnel:String}, arrayMap((t, k) -> toUInt64(t * 16 + 15 - k), times, ks), {{episode_conditions}}) AS level
          FROM (
            SELECT vno, times,
              arrayMap((n, t) -> transform(n, {names:Array(String)}, {numbers:Array(UInt8)}, 0) * (t >= {from_ms:UInt64} AND t < {to_ms:UInt64}), names, times) AS ks
            FROM sealed_person_events
            WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT {grouped:Bool}
              AND created_at < {to:DateTime64(3, 'UTC')} AND ended_at >= {from:DateTime64(3, 'UTC')}
              AND mask IN (
                WITH {steps:Array(String)}[2] AS n
                SELECT DISTINCT mask FROM sealed_person_events
                WHERE project_id = {project:String} AND version = {version:UInt64} AND bitAnd(mask, {{name_bit}}) != 0)
          )
        )
        WHERE level > 1
        GROUP BY level
      )
      GROUP BY level
    )
  )
  UNION ALL
  SELECT arrayJoin(grouped_people.2) AS level, 1 AS units
)
GROUP BY level
HAVING units > 0
ORDER BY level
