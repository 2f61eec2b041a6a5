-- /insights/{projectId}/user_flow per session from the sealed history (src/query/product/sealed-units.ts):
-- the rows of insights_user_flow.sql, each session's names read from its arrays (already in time
-- order, ties by name) instead of grouped from the events; sessions with events from C on are
-- grouped from their merged events as there.
--
-- Every mode keeps only units with the start event: sessions without it before C are left out at once.
--
-- Fragment slots: names, the include/exclude condition on `name`; keep and path as in
-- insights_user_flow.sql.
{{> sealed_unit_events}},
  units AS (
    SELECT arrayCompact(arrayFilter((name, t) -> t >= {from_ms:UInt64} AND t < {to_ms:UInt64} {{names}}, event_names, event_times)) AS names
    FROM sealed
    WHERE key NOT IN (SELECT key FROM live) AND has(event_names, {start:String})
    UNION ALL
    SELECT arrayCompact(arrayMap(x -> x.2, arraySort(groupArray((t, name))))) AS names
    FROM merged
    GROUP BY key
  )
{{> user_flow_paths}}
