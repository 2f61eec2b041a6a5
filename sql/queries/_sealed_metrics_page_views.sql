-- The page views of a sealed /metrics window with a `path` filter: each matching screen_view by
-- its own time, read from events (as the revenue is).
  UNION ALL
  SELECT if(created_at >= {from:DateTime64(3, 'UTC')}, 0, 1) AS period, {{bucket}} AS bucket,
    toUInt64(0), toUInt64(0), toUInt64(0), count(), toUInt64(0),
    groupBitmapStateIf(toUInt32(0), 0), CAST([], 'Array(UInt128)')
  FROM events
  WHERE project_id = {project:String} AND name = 'screen_view'
    AND created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
    {{view_filters}}
  GROUP BY period, bucket
