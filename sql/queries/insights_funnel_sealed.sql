-- /insights/{projectId}/funnel per session from the sealed history (src/query/product/sealed-units.ts):
-- the levels of insights_funnel.sql, each session's windowFunnel run over its arrays with
-- arrayReduce, the same aggregate over the same events, times in 1/16 ms as there. `ks` are the
-- step numbers of a session's events (the first index of the name among the steps), 0 for other
-- names and for times outside the window, which match no condition and which windowFunnel skips
-- (a product, not an `if` per session or per event: those cost more than the comparisons they
-- spare, interleaved on L). A session without an event of the second step reaches level 1 at
-- most, which `has` tells without the aggregate (most sessions of a window).
--
-- Sessions with events from C on are grouped from their merged events as over the events table.
-- Their sealed rows are counted with the rest and then taken back (`w` -1, from `live_sealed`),
-- rather than every sealed row tested against the live keys: L, 30 days, 461 -> 441 ms of CPU for 3
-- steps (medians of 15, load 4), the same rows.
--
-- Fragment slots: names, ` AND name IN {steps}`; conditions, windowFunnel's conditions over the
-- step numbers `ks` (`arrayMap(k -> k = j, ks)`, j the step name's first index); events_conditions,
-- the same over `name`.
{{> sealed_unit_events}}
SELECT level, sum(units) AS units
FROM (
  SELECT level, sum(w) AS units
  FROM (
    SELECT if(has(ks, {second:UInt8}), arrayReduce({funnel:String}, arrayMap((t, k) -> toUInt64(t * 16 + 15 - k), event_times, ks), {{conditions}}), toUInt8(has(ks, 1))) AS level, w
    FROM (
      SELECT event_times, w,
        arrayMap((n, t) -> transform(n, {names:Array(String)}, {numbers:Array(UInt8)}, 0) * (t >= {from_ms:UInt64} AND t < {to_ms:UInt64}), event_names, event_times) AS ks
      FROM (
        SELECT event_times, event_names, toInt64(1) AS w FROM sealed
        UNION ALL
        SELECT r.2, r.3, toInt64(-1) FROM (SELECT arrayJoin(live_sealed) AS r)
      )
    )
  )
  WHERE level > 0
  GROUP BY level
  UNION ALL
  SELECT level, toInt64(count())
  FROM (
    SELECT windowFunnel({window:UInt64}, 'strict_increase')(toUInt64(t * 16 + 15 - indexOf({steps:Array(String)}, name)), {{events_conditions}}) AS level
    FROM merged
    GROUP BY key
  )
  WHERE level > 0
  GROUP BY level
)
GROUP BY level
HAVING units > 0
ORDER BY level
