-- /insights/{projectId}/pages/performance: every page of the window as /pages computes it
-- (the /pages statement or its rollup's, read whole, is the subquery p), without views of an empty path,
-- those matching the search, sorted by the column asked for (ties: most sessions, then origin and
-- path), with the mean time on page in minutes as OpenPanel reports it, and how many pages matched.
SELECT
  p.origin AS origin,
  p.path AS path,
  p.title AS title,
  p.sessions AS sessions,
  p.pageviews AS pageviews,
  p.bounce_rate AS bounce_rate,
  round(p.avg_duration / 60, 2) AS minutes,
  count() OVER () AS total_pages
FROM (
{{pages}}
) AS p
WHERE p.path != ''{{search}}
ORDER BY {{sort}}, p.sessions DESC, p.origin ASC, p.path ASC
LIMIT {page_limit:UInt32}
