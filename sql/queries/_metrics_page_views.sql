-- The page views of a /metrics window with a `path` filter: each matching screen_view, counted
-- by its own time (the rows of insights_metrics.sql's src 2).
  UNION ALL
  SELECT
    2,
    if(created_at >= {from:DateTime64(3, 'UTC')}, 0, 1),
    {{bucket}},
    toUInt128(0),
    0,
    0,
    toUInt64(1),
    toUInt64(0)
  FROM events
  WHERE project_id = {project:String} AND name = 'screen_view'
    AND created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
    {{view_filters}}
