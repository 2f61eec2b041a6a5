-- The views and the sessions' entries of a /pages window before C outside its whole UTC days
-- (insights_pages_sealed), left out when it has none: each part read costs a query's fixed share.
-- `edge_views` are those views by page, with their sets of numbers (_sealed_page_edge_views.sql),
-- or, for a window counted from its day rows, of those sets the numbers not seen again before C
-- (_sealed_page_edge_ends.sql).
    UNION ALL
    SELECT origin, path, views, ms, timed, titles, sessions, visitors, 0, 0, 0, 0
    FROM ({{edge_views}})
    UNION ALL
    SELECT entry_origin, entry_path, 0, 0, 0, map(), groupBitmapStateIf(toUInt32(0), 0), groupBitmapStateIf(toUInt32(0), 0), 0, 0,
      count(), countIf(is_bounce)
    FROM sealed_sessions
    WHERE project_id = {project:String} AND version = {version:UInt64} AND screen_view_count > 0 AND {{> sealed_page_edges}}
      AND (created_at < {page_held_from:DateTime64(3, 'UTC')} OR session_key NOT IN held_out)
      {{entry_sessions}}
    GROUP BY entry_origin, entry_path
