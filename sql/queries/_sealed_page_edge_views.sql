-- The views of a /pages window before C outside its whole UTC days, by page (_sealed_page_edge_parts.sql).
SELECT origin, path, count() AS views, sum(ifNull(duration_ms, 0)) AS ms, countIf(duration_ms IS NOT NULL) AS timed,
      sumMapIf(map(title, toUInt64(1)), title != '') AS titles,
      bitmapBuild(arraySort(groupArray(sno))) AS sessions, bitmapBuild(arraySort(groupArray(vno))) AS visitors
    FROM sealed_page_views
    WHERE project_id = {project:String} AND version = {version:UInt64} AND {{> sealed_page_edges}}
      {{view_sessions}}
    GROUP BY origin, path
