-- /insights/{projectId}/profiles/{profileId}/metrics: the profile's activity over all time, from
-- its events (its own profile_id, as OpenPanel) and the sessions holding them, and first and last
-- seen from its stored row (epoch: none). Sessions are Quarry's (derived from the events), not
-- session_start/session_end events. Days are counted in the project's timezone.
SELECT *
FROM (
  SELECT
    count() AS total_events,
    countIf(name = 'screen_view') AS screen_views,
    countIf(name NOT IN ('screen_view', 'session_start', 'session_end')) AS conversion_events,
    uniqExact(toDate(created_at, {tz:String})) AS days_active,
    sumIf(revenue, name = 'revenue') AS revenue
  FROM events
  WHERE project_id = {project:String} AND profile_id = {profile:String}
) AS e
CROSS JOIN (
  SELECT
    count() AS sessions,
    countIf(is_bounce = 1) AS bounces,
    sum(duration) AS duration_ms,
    if(count() = 0, 0, quantileExactInclusive(0.9)(duration)) AS p90_duration_ms,
    if(count() = 0, 0, dateDiff('millisecond', min(created_at), max(created_at))) AS first_to_last_ms
  FROM sessions FINAL
  WHERE project_id = {project:String}
    AND id IN (SELECT session_id FROM events WHERE project_id = {project:String} AND profile_id = {profile:String} AND session_id != '')
) AS s
CROSS JOIN (
  SELECT
    toString(any(created_at)) AS first_seen,
    toString(any(last_seen_at)) AS last_seen,
    count() AS stored
  FROM profiles FINAL
  WHERE project_id = {project:String} AND id = {profile:String}
) AS p
