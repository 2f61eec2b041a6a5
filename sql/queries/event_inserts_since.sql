-- The inserts logged since a point: all of them, and those that reached before C. For a planner
-- that verified the inserts logged up to `verified`: how many are logged up to it now, and the
-- earliest event (C at least) of the ones logged after it, the only ones a check need read again.
SELECT
  count() AS inserts,
  countIf(earliest < {closed:DateTime64(3, 'UTC')}) AS closed_inserts,
  max(logged_at) AS last_logged,
  countIf(logged_at <= {verified:DateTime64(3, 'UTC')}) AS verified_inserts,
  greatest({closed:DateTime64(3, 'UTC')}, minIf(earliest, logged_at > {verified:DateTime64(3, 'UTC')})) AS unverified_from
FROM event_inserts
WHERE project_id = {project:String} AND logged_at >= {since:DateTime64(3, 'UTC')}
