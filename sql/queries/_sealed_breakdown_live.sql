-- The live sessions of a sealed breakdown's window: those with events from C on, held ones whole.
  UNION ALL
  SELECT {{prefix_column}}, {{column}}, count(), countIf(is_bounce), sum(duration),
    sum(screen_view_count), sum(revenue), {{live_visitors}}, groupArrayIf(profile_key, vno = 0)
  FROM {{live_table}}
  WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
    {{live_stamp}}
    {{live_filters}}
  GROUP BY 1, 2
