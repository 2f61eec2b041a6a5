-- For each page and each of a build's last UTC days before C's (sealed_page_days' days = 1 rows
-- with views), the session and visitor numbers whose last view of the page before C fell on that
-- day: the sets sealed_page_days' sessions_last and visitors_last count. A window that reaches C
-- from a zone's midnight or an instant inside such a day counts its whole days from those sums and,
-- of its views on the day it starts in, the numbers in these sets (the ones not seen again before C)
-- instead of merging the bitmaps of every day (L, 30d in New York or Kolkata).
CREATE TABLE IF NOT EXISTS sealed_page_ends (
  project_id LowCardinality(String),
  version UInt64,
  day Date,
  origin LowCardinality(String),
  path String CODEC(ZSTD(1)),
  sessions AggregateFunction(groupBitmap, UInt32),
  visitors AggregateFunction(groupBitmap, UInt32)
)
ENGINE = MergeTree
PARTITION BY (project_id, version)
ORDER BY (day, origin, path)
SETTINGS index_granularity = 256;
