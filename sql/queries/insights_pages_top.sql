-- /insights/{projectId}/pages/top: OpenPanel's top pages, counted and ranked as /pages counts and
-- ranks them (the /pages statement or its rollup's, read whole, is the subquery p), without views of an
-- empty path. revenue is that of the window's `revenue` events recorded on the page (its origin and
-- path), so a purchase counts on the page where it happened.
SELECT
  p.origin AS origin,
  p.path AS path,
  p.sessions AS sessions,
  p.pageviews AS pageviews,
  ifNull(r.page_revenue, 0) AS revenue
FROM (
{{pages}}
) AS p
LEFT JOIN (
  SELECT origin, path, sum(revenue) AS page_revenue
  FROM events
  WHERE project_id = {project:String} AND name = 'revenue'
    AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
    {{revenue_filters}}
  GROUP BY origin, path
) AS r ON r.origin = p.origin AND r.path = p.path
WHERE p.path != ''
ORDER BY sessions DESC, origin ASC, path ASC
LIMIT {page_limit:UInt32}
