-- The sessions that tie the events before C to those after it (kind 5), held out of the page tables
-- and read whole by every request: those whose last event before C is a view (its time on page ends
-- after C), and those with a view after C (their distinct counts, entry and bounce span C). Real
-- traffic has a few at any instant.
INSERT INTO sealed_page_keys (project_id, version, kind, key)
SELECT {project:String}, {version:UInt64}, 5, session_key
FROM (
  SELECT session_key, argMax(is_view, (created_at, id)) AS last_is_view
  FROM session_timeline
  WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')}
    AND session_key IN (
      SELECT session_key FROM session_timeline
      WHERE project_id = {project:String} AND created_at >= {closed:DateTime64(3, 'UTC')}
    )
  GROUP BY session_key
) AS before
INNER JOIN (
  SELECT session_key, max(is_view) AS has_view
  FROM session_timeline
  WHERE project_id = {project:String} AND created_at >= {closed:DateTime64(3, 'UTC')}
  GROUP BY session_key
) AS after USING (session_key)
WHERE last_is_view OR has_view
