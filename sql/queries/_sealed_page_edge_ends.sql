-- The views of a window counted from its day rows (_sealed_page_day_counts.sql) before its first whole
-- UTC day, all on the day it starts in: their sets of numbers less those seen again before C, which
-- the day rows count (sql/schema/038_sealed_page_ends.sql). A visitor after C seen on that day is
-- counted by its number (the `live_visitors` slot), so the union counts it once.
SELECT e.origin AS origin, e.path AS path, e.views AS views, e.ms AS ms, e.timed AS timed, e.titles AS titles,
      bitmapAnd(e.sessions, n.sessions) AS sessions, bitmapAnd(e.visitors, n.visitors) AS visitors
    FROM ({{edge_views}}) AS e
    INNER JOIN (
      SELECT origin, path, sessions, visitors FROM sealed_page_ends
      WHERE project_id = {project:String} AND version = {version:UInt64} AND day = toDate({from:DateTime64(3, 'UTC')})
    ) AS n USING (origin, path)
