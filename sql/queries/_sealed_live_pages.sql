-- What /pages adds after C for a build (see sealed_live_pages): the events from C on and the
-- held-out sessions whole, read as insights_pages reads them. Their sessions are none of the
-- build's; their visitors are looked up by number (the empty profile, unnumbered, is 0 as in the
-- build), with the last day before C each viewed the page on (`seen`, _sealed_page_seen.sql).
recent_events AS MATERIALIZED (
  SELECT created_at, id, is_view, origin, path, title, session_key, profile_key
  FROM session_timeline
  WHERE project_id = {project:String} AND created_at >= {closed:DateTime64(3, 'UTC')}
  UNION ALL
  SELECT created_at, id, is_view, origin, path, title, session_key, profile_key
  FROM session_timeline
  WHERE project_id = {project:String} AND session_key IN arrayMap(key -> toUInt128(key), {held_out:Array(String)})
    AND created_at >= {page_held_from:DateTime64(3, 'UTC')} AND created_at < {closed:DateTime64(3, 'UTC')}
),
live_views AS MATERIALIZED (
  SELECT v.created_at AS created_at, v.origin AS origin, v.path AS path, v.title AS title,
    v.session_key AS session_key, v.profile_key AS profile_key, n.vno AS vno,
    toUInt8(n.known = 1 OR v.profile_key = reinterpretAsUInt128(sipHash128(''))) AS known,
    dateDiff('millisecond', v.created_at, v.next_at) AS duration_ms
  FROM (
    SELECT created_at, is_view, origin, path, title, session_key, profile_key,
      {{> next_event_at}}
    FROM recent_events
  ) AS v
  LEFT JOIN (
    SELECT profile_key, min(vno) AS vno, 1 AS known
    FROM sealed_visitors
    WHERE project_id = {project:String} AND profile_key IN (SELECT profile_key FROM recent_events WHERE is_view)
    GROUP BY profile_key
  ) AS n USING (profile_key)
  WHERE v.is_view
),
live_pages AS (
  SELECT toUInt8(1) AS kind, created_at, origin, path, title, session_key, profile_key, vno, known, duration_ms,
    toUInt64(0) AS views, s.seen AS seen
  FROM live_views
  LEFT JOIN (
    {{> sealed_page_seen}}
  ) AS s USING (origin, path, vno)
  UNION ALL
  SELECT 2, started_at, entry.2, entry.3, '', session_key, 0, 0, 0, NULL, views, toDate(0)
  FROM (
    SELECT session_key,
      min(created_at) AS started_at,
      min(if(is_view, (created_at, origin, path), (toDateTime64('2299-12-31 00:00:00', 3, 'UTC'), '', ''))) AS entry,
      countIf(is_view) AS views
    FROM recent_events
    WHERE session_key != reinterpretAsUInt128(sipHash128(''))
    GROUP BY session_key
    HAVING views > 0
  )
)
