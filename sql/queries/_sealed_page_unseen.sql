-- A window counted from its days (_sealed_page_day_counts.sql): of each page's numbered visitors
-- after C, those none of its day rows holds. Intersecting each row's bitmap with the few visitors
-- after C costs its read, not a merge of every row's bitmap (L, 30d: looking them up among the
-- window's views instead scans 4M of them, about 240 ms of CPU).
    UNION ALL
    SELECT l.origin, l.path, 0, 0, 0, map(), groupBitmapStateIf(toUInt32(0), 0),
      bitmapAndnot(any(l.numbered), groupBitmapMergeState(bitmapAnd(d.visitors, l.numbered))), 0, 0, 0, 0
    FROM (
      SELECT origin, path, groupBitmapState(vno) AS numbered
      FROM live_pages
      WHERE kind = 1 AND known = 1 AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
      GROUP BY origin, path
    ) AS l
    LEFT JOIN (
      SELECT origin, path, visitors FROM sealed_page_days WHERE {{> sealed_page_day_rows}}
    ) AS d USING (origin, path)
    GROUP BY l.origin, l.path
