-- The live sessions of a sealed /metrics window: those with events from C on, held ones whole.
  UNION ALL
  SELECT if(created_at >= {from:DateTime64(3, 'UTC')}, 0, 1) AS period, {{bucket}} AS bucket,
    count(), countIf(is_bounce), sum(duration), sum({{session_views}}), toUInt64(0),
    groupBitmapStateIf(vno, vno != 0), groupArrayIf(profile_key, vno = 0)
  FROM {{live_table}}
  WHERE created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
    {{live_stamp}}
    {{live_filters}}
  GROUP BY period, bucket
