-- The page views of a sealed /metrics window whose filters are all on the page (origin, path), from
-- the page tables instead of the events (L, 30d, `path contains /blog`: 827 ms of CPU at load 9):
-- whole UTC days [view_days_from, view_days_to) from the day rows (the caller leaves them empty
-- unless no bucket starts inside a day), the rest before C from the views, and from the events
-- the views of the sessions the page tables hold out (all begun at page_held_from or later) and
-- those from C on. Their first day is said apart for the events' key (see _sealed_metrics_revenue.sql:
-- without it, 251 ms of CPU instead of 34 on L).
  UNION ALL
  SELECT if(created_at >= {from:DateTime64(3, 'UTC')}, 0, 1) AS period, {{bucket}} AS bucket,
    toUInt64(0), toUInt64(0), toUInt64(0), sum(n), toUInt64(0),
    groupBitmapStateIf(toUInt32(0), 0), CAST([], 'Array(UInt128)')
  FROM (
    SELECT toDateTime64(day, 3, 'UTC') AS created_at, views AS n FROM sealed_page_days
    WHERE project_id = {project:String} AND version = {version:UInt64} AND days = 1
      AND day >= toDate({view_days_from:DateTime64(3, 'UTC')}) AND day < toDate({view_days_to:DateTime64(3, 'UTC')})
      {{view_filters}}
    UNION ALL
    SELECT created_at, toUInt64(1) FROM sealed_page_views
    WHERE project_id = {project:String} AND version = {version:UInt64}
      AND ((created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {view_days_from:DateTime64(3, 'UTC')})
        OR (created_at >= {view_days_to:DateTime64(3, 'UTC')} AND created_at < least({to:DateTime64(3, 'UTC')}, {closed:DateTime64(3, 'UTC')})))
      {{view_filters}}
    UNION ALL
    SELECT created_at, toUInt64(1) FROM events
    WHERE project_id = {project:String} AND name = 'screen_view'
      AND created_at >= greatest({earliest:DateTime64(3, 'UTC')}, {page_held_from:DateTime64(3, 'UTC')}) AND created_at < {to:DateTime64(3, 'UTC')}
      AND toDate(created_at) >= toDate(greatest({earliest:DateTime64(3, 'UTC')}, {page_held_from:DateTime64(3, 'UTC')}))
      AND (created_at >= {closed:DateTime64(3, 'UTC')}
        OR reinterpretAsUInt128(sipHash128(session_id)) IN (SELECT toUInt128(arrayJoin({held_out:Array(String)}))))
      {{view_filters}}
  )
  GROUP BY period, bucket
