-- /insights/{projectId}/{dimension}: sessions started in the window, grouped by the session's
-- value of the dimension (its first event's, or its entry/exit page). One row more than the page
-- size is read so the caller knows whether another page follows.
SELECT
  {{prefix}} AS prefix,
  nullIf({{column}}, '') AS name,
  count() AS sessions,
  uniqExact(profile_key) AS visitors,
  sum(screen_view_count) AS pageviews,
  round(100 * countIf(is_bounce) / sessions, 2) AS bounce_rate,
  round(sum(duration) / sessions / 1000, 2) AS avg_session_duration,
  sum(revenue) AS revenue
FROM sessions FINAL
WHERE project_id = {project:String}
  AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  {{session_filters}}
GROUP BY prefix, name
ORDER BY sessions DESC, prefix ASC NULLS LAST, name ASC NULLS LAST
LIMIT {limit:UInt32} OFFSET {offset:UInt64}
