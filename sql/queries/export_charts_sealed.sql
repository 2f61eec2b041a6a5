-- /export/charts: one series from the sealed history (src/query/sealed-charts.ts says which
-- series): the same rows as export_charts.sql for a series without breakdowns. Whole UTC hours
-- [rollup_from, rollup_to) before C come from the event rollups, but for the hours a bucket or the
-- current window starts inside ({holes}, when there are any), so that each hour read falls in one
-- bucket (the whole UTC days among them [long_from, long_to) from the day rows, where each day falls
-- in one bucket); the rest of [earliest, to) and those hours from the events, with each profile's
-- number where it has one and its key where it has none (first seen since the build), so that
-- profiles are counted once across both.
--
-- Fragment slots: bucket, the bucket expression over `created_at`; rollup_conditions and
-- event_conditions, ` AND …` predicates (event name, profiled events only, not the split hours);
-- value, the segment's value from `events` and `profiles`; hole_events, ` OR …` the events of the
-- split hours; profile_numbers, the numbers of the events' profiles (_chart_profile_numbers*.sql).
-- All come from src/query/sealed-charts.ts.
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
          AND {{> sealed_rollup_rows}}
          {{rollup_conditions}}
      )
      GROUP BY period, bucket
      UNION ALL
      SELECT if(created_at >= {from:DateTime64(3, 'UTC')}, 0, 1) AS period, {{bucket}} AS bucket,
        count(), groupBitmapStateIf(v.vno, v.vno != 0 AND e.profile_id != ''), groupArrayIf(profile_key, v.vno = 0 AND e.profile_id != '')
      FROM (
        SELECT created_at, profile_id, reinterpretAsUInt128(sipHash128(profile_id)) AS profile_key
        FROM events
        WHERE project_id = {project:String}
          AND ((created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {rollup_from:DateTime64(3, 'UTC')})
            OR (created_at >= {rollup_to:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}){{hole_events}})
          {{event_conditions}}
      ) AS e
      LEFT JOIN ({{profile_numbers}}
      ) AS v USING (profile_key)
      GROUP BY period, bucket
    )
    GROUP BY GROUPING SETS ((period, bucket), (period))
  )
)
WHERE current_rows > 0
