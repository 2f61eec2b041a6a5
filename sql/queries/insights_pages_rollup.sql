-- /insights/{projectId}/pages from a rollup (sql/schema/011_page_rollups.sql): the same numbers
-- as insights_pages, for a window that starts at a local midnight before the rollup's C and ends
-- after it. What came before C comes from the rollup (its last day is the part of C's day before
-- C); `recent` is what the rollup leaves out, read as insights_pages reads it: the events from C
-- on, and the held-out sessions whole. It holds only while no insert reached before C and no event
-- after C tied a session of the rollup to the events before it since the build;
-- src/query/page-rollups.ts checks that first. The held-out keys come as decimal strings: JSON has
-- no 128-bit numbers, and explain=sql must show parameters that run as shown.
WITH
  toDate({from:DateTime64(3, 'UTC')}, {timezone:String}) AS from_day,
  recent_events AS MATERIALIZED (
    SELECT created_at, id, is_view, origin, path, title, session_key, profile_key
    FROM session_timeline
    WHERE project_id = {project:String} AND created_at >= {closed:DateTime64(3, 'UTC')}
    UNION ALL
    SELECT created_at, id, is_view, origin, path, title, session_key, profile_key
    FROM session_timeline
    WHERE project_id = {project:String} AND session_key IN arrayMap(key -> toUInt128(key), {held_out:Array(String)})
      AND created_at >= {held_from:DateTime64(3, 'UTC')} AND created_at < {closed:DateTime64(3, 'UTC')}
  ),
  recent AS (
    SELECT *,
      leadInFrame(toNullable(created_at)) OVER (
        PARTITION BY session_key ORDER BY created_at, id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING
      ) AS next_at
    FROM recent_events
  ),
  recent_visitors AS (
    SELECT reinterpretAsUInt128(sipHash128(origin, path, profile_key)) FROM recent_events
    WHERE is_view AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  ),
  parts AS (
    SELECT origin, path,
      toInt64(views) AS views, toInt64(sessions) - toInt64(repeats) AS sessions, toInt64(visitors) AS visitors,
      duration_ms, toInt64(durations) AS durations, titles, toInt64(entries) AS entries, toInt64(bounces) AS bounces
    FROM page_rollup_days
    WHERE project_id = {project:String} AND version = {version:UInt64} AND day >= from_day
    UNION ALL
    SELECT origin, path, 0, 0, -toInt64(count()), 0, 0, map(), 0, 0
    FROM page_rollup_keys
    WHERE project_id = {project:String} AND version = {version:UInt64} AND kind = 2
      AND key IN recent_visitors AND day >= from_day
    GROUP BY origin, path
    UNION ALL
    SELECT origin, path, toInt64(count()), toInt64(uniqExact(session_key)), toInt64(uniqExact(profile_key)),
      sumIf(dateDiff('millisecond', created_at, next_at), next_at IS NOT NULL), toInt64(countIf(next_at IS NOT NULL)),
      sumMapIf(map(title, toUInt64(1)), title != ''), 0, 0
    FROM recent
    WHERE is_view AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
    GROUP BY origin, path
    UNION ALL
    SELECT entry.2, entry.3, 0, 0, 0, 0, 0, map(), toInt64(count()), toInt64(countIf(views <= 1))
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
      toUInt64(sum(views)) AS pageviews, toUInt64(sum(sessions)) AS sessions, toUInt64(sum(visitors)) AS visitors,
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
