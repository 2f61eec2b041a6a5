-- /insights/{projectId}/pages from the sealed history (sql/schema/023_sealed_pages.sql): the same
-- rows as insights_pages, for any window. Before C, whole UTC days come from the day rows and the
-- rest of the window (`edges`: up to a zone's midnight or an ISO instant, and up to the window's end
-- when it ends before C) from the views and sessions themselves; a page's sessions and visitors are
-- unions of their sets of numbers. `recent` is what the build leaves out, read as insights_pages
-- reads it: the events from C on, and the held-out sessions whole. Its sessions are none of the
-- build's; its visitors are looked up by number, and those without one (first seen after C) counted
-- apart. This holds while no insert reached before C and no event after C tied a session of the
-- build to what came before; the planner (src/services/sealed) checks that first. The held-out keys
-- come as decimal strings: JSON has no 128-bit numbers, and explain=sql must show parameters that run
-- as shown.
WITH
  reinterpretAsUInt128(sipHash128('')) AS empty_profile,
  arrayMap(key -> toUInt128(key), {held_out:Array(String)}) AS held_out,
  recent_events AS MATERIALIZED (
    SELECT created_at, id, is_view, origin, path, title, session_key, profile_key
    FROM session_timeline
    WHERE project_id = {project:String} AND created_at >= {closed:DateTime64(3, 'UTC')}
    UNION ALL
    SELECT created_at, id, is_view, origin, path, title, session_key, profile_key
    FROM session_timeline
    WHERE project_id = {project:String} AND session_key IN held_out
      AND created_at >= {held_from:DateTime64(3, 'UTC')} AND created_at < {closed:DateTime64(3, 'UTC')}
  ),
  recent_views AS (
    SELECT *
    FROM (
      SELECT created_at, is_view, origin, path, title, session_key, profile_key,
        leadInFrame(toNullable(created_at)) OVER (
          PARTITION BY session_key ORDER BY created_at, id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING
        ) AS next_at
      FROM recent_events
    )
    WHERE is_view AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  ),
  numbered AS (
    SELECT profile_key, min(vno) AS vno, 1 AS known
    FROM sealed_visitors
    WHERE project_id = {project:String} AND profile_key IN (SELECT profile_key FROM recent_events WHERE is_view)
    GROUP BY profile_key
  ),
  parts AS (
    SELECT origin, path, views, duration_ms, durations, titles, sessions, visitors,
      toUInt64(0) AS new_sessions, toUInt64(0) AS new_visitors, entries, bounces
    FROM sealed_page_days
    WHERE project_id = {project:String} AND version = {version:UInt64}
      AND day >= toDate({days_from:DateTime64(3, 'UTC')}) AND day < toDate({days_to:DateTime64(3, 'UTC')})
    UNION ALL
    SELECT origin, path, count(), sum(ifNull(duration_ms, 0)), countIf(duration_ms IS NOT NULL), sumMapIf(map(title, toUInt64(1)), title != ''),
      groupBitmapState(sno), groupBitmapState(vno), 0, 0, 0, 0
    FROM sealed_page_views
    WHERE project_id = {project:String} AND version = {version:UInt64} AND {{> sealed_page_edges}}
    GROUP BY origin, path
    UNION ALL
    SELECT entry_origin, entry_path, 0, 0, 0, map(), groupBitmapStateIf(toUInt32(0), 0), groupBitmapStateIf(toUInt32(0), 0), 0, 0,
      count(), countIf(is_bounce)
    FROM sealed_sessions
    WHERE project_id = {project:String} AND version = {version:UInt64} AND screen_view_count > 0 AND {{> sealed_page_edges}}
      AND session_key NOT IN held_out
    GROUP BY entry_origin, entry_path
    UNION ALL
    SELECT origin, path, count(), sumIf(dateDiff('millisecond', created_at, next_at), next_at IS NOT NULL), countIf(next_at IS NOT NULL),
      sumMapIf(map(title, toUInt64(1)), title != ''), groupBitmapStateIf(toUInt32(0), 0),
      groupBitmapStateIf(n.vno, n.known = 1 OR v.profile_key = empty_profile), uniqExact(session_key),
      uniqExactIf(v.profile_key, n.known = 0 AND v.profile_key != empty_profile), 0, 0
    FROM recent_views AS v
    LEFT JOIN numbered AS n USING (profile_key)
    GROUP BY origin, path
    UNION ALL
    SELECT entry.2, entry.3, 0, 0, 0, map(), groupBitmapStateIf(toUInt32(0), 0), groupBitmapStateIf(toUInt32(0), 0), 0, 0,
      count(), countIf(views <= 1)
    FROM (
      SELECT
        min(created_at) AS started_at,
        min(if(is_view, (created_at, origin, path), (toDateTime64('2299-12-31 00:00:00', 3, 'UTC'), '', ''))) AS entry,
        countIf(is_view) AS views
      FROM recent_events
      WHERE session_key != reinterpretAsUInt128(sipHash128(''))
      GROUP BY session_key
      HAVING views > 0 AND started_at >= {from:DateTime64(3, 'UTC')} AND started_at < {to:DateTime64(3, 'UTC')}
    )
    GROUP BY entry.2, entry.3
  ),
  pages AS (
    SELECT origin, path,
      toUInt64(sum(views)) AS pageviews,
      groupBitmapMerge(sessions) + sum(new_sessions) AS sessions,
      groupBitmapMerge(visitors) + sum(new_visitors) AS visitors,
      sum(duration_ms) AS duration_ms, sum(durations) AS durations, sumMap(titles) AS titles,
      sum(entries) AS entries, sum(bounces) AS bounces
    FROM parts
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
