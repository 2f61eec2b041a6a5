-- The rest of a sealed chart's window, outside its rollup rows, by bucket: `rows` are
-- (created_at, vno, profile_key, profiled), from _chart_outside_events.sql or
-- _chart_outside_snapshot.sql.
      UNION ALL
      SELECT if(created_at >= {from:DateTime64(3, 'UTC')}, 0, 1) AS period, {{bucket}} AS bucket,
        count(), groupBitmapStateIf(vno, vno != 0 AND profiled), groupArrayIf(profile_key, vno = 0 AND profiled)
      FROM ({{rows}}
      )
      GROUP BY period, bucket