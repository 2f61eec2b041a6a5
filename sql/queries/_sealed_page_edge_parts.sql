-- The views and the sessions' entries of a /pages window before C outside its whole UTC days
-- (insights_pages_sealed), left out when it has none: each part read costs a query's fixed share.
    UNION ALL
    SELECT origin, path, count(), sum(ifNull(duration_ms, 0)), countIf(duration_ms IS NOT NULL), sumMapIf(map(title, toUInt64(1)), title != ''),
      bitmapBuild(arraySort(groupArray(sno))), bitmapBuild(arraySort(groupArray(vno))), 0, 0, 0, 0
    FROM sealed_page_views
    WHERE project_id = {project:String} AND version = {version:UInt64} AND {{> sealed_page_edges}}
      {{view_sessions}}
    GROUP BY origin, path
    UNION ALL
    SELECT entry_origin, entry_path, 0, 0, 0, map(), groupBitmapStateIf(toUInt32(0), 0), groupBitmapStateIf(toUInt32(0), 0), 0, 0,
      count(), countIf(is_bounce)
    FROM sealed_sessions
    WHERE project_id = {project:String} AND version = {version:UInt64} AND screen_view_count > 0 AND {{> sealed_page_edges}}
      AND (created_at < {page_held_from:DateTime64(3, 'UTC')} OR session_key NOT IN held_out)
      {{entry_sessions}}
    GROUP BY entry_origin, entry_path
