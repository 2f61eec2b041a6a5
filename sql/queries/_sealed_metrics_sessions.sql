-- The part of a sealed /metrics window before C that whole hours of the totals do not cover (with
-- `hole_sessions`, the hours its buckets split). Visitors' bitmaps from their sorted numbers, as
-- _sealed_breakdown_sessions.sql builds them.
  UNION ALL
  SELECT if(created_at >= {from:DateTime64(3, 'UTC')}, 0, 1) AS period, {{bucket}} AS bucket,
    count(), countIf(is_bounce), sum(duration), sum({{session_views}}), toUInt64(0),
    bitmapBuild(arraySort(groupArray(vno))), CAST([], 'Array(UInt128)')
  FROM sealed_sessions
  WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held
    AND ((created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {rollup_from:DateTime64(3, 'UTC')})
      OR (created_at >= {rollup_to:DateTime64(3, 'UTC')} AND created_at < least({to:DateTime64(3, 'UTC')}, {closed:DateTime64(3, 'UTC')})){{hole_sessions}})
    {{session_filters}}
  GROUP BY period, bucket
