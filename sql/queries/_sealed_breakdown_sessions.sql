-- The part of a sealed breakdown's window before C that whole days of the rollups do not cover.
-- Visitors' bitmaps are built from their sorted numbers: roaring appends them in order instead of
-- inserting each (L, 30d, `referrer_name` + `country is US`: 308 -> 216 ms of CPU, same rows).
  UNION ALL
  SELECT {{prefix_column}}, {{column}}, count(), countIf(is_bounce), sum(duration),
    sum(screen_view_count), sum(revenue), bitmapBuild(arraySort(groupArray(vno))), CAST([], 'Array(UInt128)')
  FROM sealed_sessions
  WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held
    AND ((created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {rollup_from:DateTime64(3, 'UTC')})
      OR (created_at >= {rollup_to:DateTime64(3, 'UTC')} AND created_at < least({to:DateTime64(3, 'UTC')}, {closed:DateTime64(3, 'UTC')})))
    {{session_filters}}
  GROUP BY 1, 2
