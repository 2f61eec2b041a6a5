-- The whole UTC days of a /pages window from the day rows (insights_pages_sealed): their sets of
-- numbers, or their counts (`day_sets`).
SELECT origin, path, views, duration_ms, durations, titles,
      {{day_sets}},
      entries, bounces
    FROM sealed_page_days
    WHERE {{> sealed_page_day_rows}}
