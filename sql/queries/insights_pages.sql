-- /insights/{projectId}/pages: screen views in the window, grouped by page, read from
-- session_timeline (every event, session ids and profile ids as the 128-bit hashes uniqExact
-- keeps for strings, so the counts are those of the ids).
-- Time on page runs from a view to the next event of its session (which may fall after the
-- window); a view that is its session's last event has none and is left out of the mean. Events
-- at equal times follow each other in id order.
-- bounce_rate is over the sessions that started in the window and entered on the page (a session
-- without views entered on none, not on the page of empty origin and path). title is
-- the most frequent non-empty `__title`, the alphabetically first among equally frequent ones.
WITH
  ranked AS (
    SELECT
      origin,
      path,
      uniqExact(session_key) AS sessions,
      uniqExact(profile_key) AS visitors,
      count() AS pageviews,
      sumMapIf([title], [toUInt64(1)], title != '') AS titles,
      sumIf(dateDiff('millisecond', created_at, next_at), next_at IS NOT NULL) / nullIf(countIf(next_at IS NOT NULL), 0) / 1000 AS seconds
    FROM (
      SELECT id, created_at, is_view, origin, path, title, session_key, profile_key,
        {{> next_event_at}}
      FROM session_timeline
      WHERE project_id = {project:String} AND created_at >= {from:DateTime64(3, 'UTC')}
    )
    WHERE is_view AND created_at < {to:DateTime64(3, 'UTC')}
      {{view_filters}}
    GROUP BY origin, path
    ORDER BY sessions DESC, origin ASC, path ASC
    LIMIT {limit:UInt32} OFFSET {offset:UInt64}
  ),
  entries AS (
    SELECT entry_origin AS origin, entry_path AS path, round(100 * countIf(is_bounce) / count(), 2) AS bounce_rate
    FROM sessions FINAL
    WHERE project_id = {project:String} AND screen_view_count > 0
      AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
      {{session_filters}}
    GROUP BY origin, path
  )
SELECT
  r.origin AS origin,
  r.path AS path,
  arraySort((title, n) -> (-n, title), r.titles.1, r.titles.2)[1] AS title,
  r.sessions AS sessions,
  r.visitors AS visitors,
  r.pageviews AS pageviews,
  ifNull(e.bounce_rate, 0) AS bounce_rate,
  round(ifNull(r.seconds, 0), 2) AS avg_duration
FROM ranked AS r
LEFT JOIN entries AS e ON e.origin = r.origin AND e.path = r.path
ORDER BY sessions DESC, origin ASC, path ASC
