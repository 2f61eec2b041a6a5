-- /insights/{projectId}/pages from the sealed history (sql/schema/023_sealed_pages.sql): the same
-- rows as insights_pages, for any window. Before C, whole UTC days come from the day rows (whole
-- 8-day blocks of them as blocks) and the rest of the window (`edges`: up to a zone's midnight or
-- an ISO instant, and up to the window's end when it ends before C) from the views and sessions
-- themselves; a page's sessions and visitors are unions of their sets of numbers, or, for whole
-- days to C and nothing before them (`day_sets`: _sealed_page_day_counts.sql), sums of counts.
-- What the build leaves out (the events from C on, and the held-out sessions whole) is read as
-- written for the state of the events after C (sealed_live_pages under `pages_stamp`, in place), or
-- computed (`live_pages`, _sealed_live_pages.sql); its views (kind 1) and entries (kind 2) in one
-- pass (with the read in place, M's statement 24 -> 20 ms: benchmarks/README.md, twenty-first
-- stop), and its visitors without a number (first seen after C) counted apart.
-- Filters on a view's origin, path or name are filters on the page (`page_filters`, before the
-- bitmaps of the pages left out are merged): a page that passes passes with all its views, and a
-- session entering on it with its entry. Every view's name is `screen_view` (the `name` below), so
-- a filter on it keeps every page or none. Filters on session attributes keep the views and entries of the
-- sessions that pass (the `*_sessions` slots: the day rows are left out, the live sessions computed),
-- but filters on the country alone keep day rows by country whole (`day_parts`:
-- _sealed_page_country_days.sql).
-- This holds while no insert reached before C and no event after C tied a session of the
-- build to what came before; the planner (src/services/sealed) checks that first. The held-out keys
-- come as decimal strings: JSON has no 128-bit numbers, and explain=sql must show parameters that run
-- as shown. They all began at page_held_from or later: the sessions before it skip the check (L, 30d,
-- one country: the entries' branch 551 -> 252 ms of CPU).
WITH
  arrayMap(key -> toUInt128(key), {held_out:Array(String)}) AS held_out,
  {{live_pages}}
  {{live_sessions}}
  parts AS (
    {{day_parts}}
{{edge_parts}}
    UNION ALL
    SELECT origin, path, countIf(kind = 1), sumIf(ifNull(duration_ms, 0), kind = 1), countIf(kind = 1 AND duration_ms IS NOT NULL),
      sumMapIf(map(title, toUInt64(1)), kind = 1 AND title != ''), groupBitmapStateIf(toUInt32(0), 0), {{live_visitors}},
      uniqExactIf(session_key, kind = 1), uniqExactIf(profile_key, kind = 1 AND known = 0), countIf(kind = 2), countIf(kind = 2 AND views <= 1)
    FROM {{live_pages_table}}
    WHERE kind IN (1, 2) AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
      {{live_pages_stamp}}
      {{live_view_sessions}}
    GROUP BY origin, path
  ),
  pages AS (
    SELECT origin, path,
      toUInt64(sum(views)) AS pageviews,
      groupBitmapMerge(sessions) + sum(new_sessions) AS sessions,
      groupBitmapMerge(visitors) + sum(new_visitors) AS visitors,
      sum(duration_ms) AS duration_ms, sum(durations) AS durations, sumMap(titles) AS titles,
      sum(entries) AS entries, sum(bounces) AS bounces, 'screen_view' AS name
    FROM parts
    WHERE true {{page_filters}}
    GROUP BY origin, path
    HAVING pageviews > 0
  )
SELECT
  origin,
  path,
  arraySort((title, n) -> (-n, title), mapKeys(titles), mapValues(titles))[1] AS title,
  sessions,
  visitors,
  pageviews,
  if(entries = 0, 0, round(100 * bounces / entries, 2)) AS bounce_rate,
  round(ifNull(duration_ms / nullIf(durations, 0) / 1000, 0), 2) AS avg_duration
FROM pages
ORDER BY sessions DESC, origin ASC, path ASC
LIMIT {limit:UInt32} OFFSET {offset:UInt64}
