-- /export/charts: one series from the sealed history (src/query/sealed-charts.ts says which
-- series): the same rows as export_charts.sql for a series without breakdowns. Whole UTC hours
-- [rollup_from, rollup_to) before C come from the event rollups, but for the hours a bucket or the
-- current window starts inside (`hour_holes`), so that each hour read falls in one bucket (the whole
-- UTC days among them [long_from, long_to) from the day rows, where each day falls in one bucket);
-- with the half hours of {halves} (`half_rows`, _chart_halves.sql, when there are any: the halves of
-- the hours split on the half hour, and the half hour a window starts or ends with) they make
-- [sealed_from, sealed_to). The rest of [earliest, to) and the other split hours ({holes}, the
-- `outside` slot, _chart_outside.sql, empty where there is no rest) with each profile's number
-- where it has one and its key where it has none (first seen since the build), so that profiles are
-- counted once across both: from the events
-- (_chart_outside_events.sql), or, where that rest is all from C on, from the events after C as
-- written for their snapshot's stamp (_chart_outside_snapshot.sql).
--
-- Fragment slots: bucket, the bucket expression over `created_at`; hour_holes, ` AND …` the split
-- hours left out of the hours; rollup_conditions, ` AND …` predicates (event name, profiled events
-- only); half_rows, the half hours' rows; value, the segment's value from `events` and `profiles`;
-- outside, the branch of the rest. All come from src/query/sealed-charts.ts.
SELECT period, bucket, is_total, value, profiles, '' AS l0, '' AS l1, '' AS l2
FROM (
  SELECT *, countIf(period = 0) OVER () AS current_rows
  FROM (
    SELECT
      period,
      bucket,
      grouping(bucket) AS is_total,
      sum(n) AS events,
      groupBitmapMerge(bitmap) + uniqExactArray(unnumbered) AS profiles,
      {{value}} AS value
    FROM (
      SELECT if(created_at >= {from:DateTime64(3, 'UTC')}, 0, 1) AS period, {{bucket}} AS bucket,
        sum(events) AS n, groupBitmapMergeState(profiles) AS bitmap, CAST([], 'Array(UInt128)') AS unnumbered
      FROM (
        SELECT hour AS created_at, events, profiles
        FROM sealed_event_rollups
        WHERE project_id = {project:String} AND version = {version:UInt64}
          AND {{> sealed_rollup_rows}}{{hour_holes}}
          {{rollup_conditions}}
{{half_rows}}
      )
      GROUP BY period, bucket
{{outside}}
    )
    GROUP BY GROUPING SETS ((period, bucket), (period))
  )
)
WHERE current_rows > 0
