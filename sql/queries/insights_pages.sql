-- /insights/{projectId}/pages: screen views in the window, grouped by page.
-- Time on page runs from a view to the next event of its session (which may fall after the
-- window); a view that is its session's last event has none and is left out of the mean.
-- bounce_rate is over the sessions that started in the window and entered on the page. title is
-- the most frequent non-empty `__title`, the alphabetically first among equally frequent ones.
WITH
  views AS (
    SELECT id, origin, path, session_id, profile_id, properties['__title'] AS title
    FROM events
    WHERE project_id = {project:String} AND name = 'screen_view'
      AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
      {{view_filters}}
  ),
  ranked AS (
    SELECT origin, path, uniqExact(session_id) AS sessions, uniqExact(profile_id) AS visitors, count() AS pageviews
    FROM views
    GROUP BY origin, path
    ORDER BY sessions DESC, origin ASC, path ASC
    LIMIT {limit:UInt32} OFFSET {offset:UInt64}
  ),
  titles AS (
    SELECT origin, path, argMin(title, (-n, title)) AS title
    FROM (
      SELECT origin, path, title, count() AS n
      FROM views
      WHERE title != '' AND (origin, path) IN (SELECT origin, path FROM ranked)
      GROUP BY origin, path, title
    )
    GROUP BY origin, path
  ),
  time_on_page AS (
    SELECT v.origin, v.path, avg(dateDiff('millisecond', n.created_at, n.next_at)) / 1000 AS seconds
    FROM (
      SELECT id, created_at,
        leadInFrame(toNullable(created_at)) OVER (
          PARTITION BY session_id ORDER BY created_at, id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING
        ) AS next_at
      FROM events
      WHERE project_id = {project:String} AND created_at >= {from:DateTime64(3, 'UTC')}
        AND session_id IN (SELECT session_id FROM views WHERE (origin, path) IN (SELECT origin, path FROM ranked))
    ) AS n
    INNER JOIN views AS v ON v.id = n.id
    WHERE n.next_at IS NOT NULL AND (v.origin, v.path) IN (SELECT origin, path FROM ranked)
    GROUP BY v.origin, v.path
  ),
  entries AS (
    SELECT entry_origin AS origin, entry_path AS path, round(100 * countIf(is_bounce) / count(), 2) AS bounce_rate
    FROM sessions FINAL
    WHERE project_id = {project:String}
      AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
      {{session_filters}}
    GROUP BY origin, path
  )
SELECT
  r.origin AS origin,
  r.path AS path,
  ifNull(t.title, '') AS title,
  r.sessions AS sessions,
  r.visitors AS visitors,
  r.pageviews AS pageviews,
  ifNull(e.bounce_rate, 0) AS bounce_rate,
  round(ifNull(d.seconds, 0), 2) AS avg_duration
FROM ranked AS r
LEFT JOIN titles AS t ON t.origin = r.origin AND t.path = r.path
LEFT JOIN entries AS e ON e.origin = r.origin AND e.path = r.path
LEFT JOIN time_on_page AS d ON d.origin = r.origin AND d.path = r.path
ORDER BY sessions DESC, origin ASC, path ASC
