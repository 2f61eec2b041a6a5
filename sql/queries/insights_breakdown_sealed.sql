-- /insights/{projectId}/{dimension} from the sealed history (sql/schema/012_sealed.sql): the same
-- rows as insights_breakdown. Before C, whole UTC days [rollup_from, rollup_to) come from the
-- rollups (its 8-day blocks [long_from, long_to), and its days around them) and the rest of the
-- window from sealed_sessions (the `sessions` slot, _sealed_breakdown_sessions.sql); from C on, the
-- live sessions (the `live_part` slot, _sealed_breakdown_live.sql). A slot is empty where its part
-- of the window is: each part read costs a query's fixed share even when it finds no row. Visitors
-- are the union of the numbered visitors' bitmaps, plus the distinct visitors first seen after C;
-- or, over whole UTC days to C since C's day minus SEEN_DAYS without filters, the sum of the days'
-- counts of visitors by their last sealed day (`counted`, sealed_rollup_last), plus the live ones
-- not seen with the value on those days (`live_visitors`, sealed_live_seen).
-- Filters all on the dimension's own value (or its prefix) keep or drop a rollup row whole: the rows
-- take them as well (`rollup_filters`, on the rows' columns under the sessions' names: `rollups`).
WITH
{{live}}
SELECT
  {{prefix}} AS prefix,
  nullIf(name_value, '') AS name,
  sum(n) AS sessions,
  {{visitors}} + uniqExactArray(unnumbered) AS visitors,
  sum(views) AS pageviews,
  round(100 * sum(bounces) / sessions, 2) AS bounce_rate,
  round(sum(total_duration) / sessions / 1000, 2) AS avg_session_duration,
  sum(money) AS revenue
FROM (
  SELECT prefix AS prefix_value, value AS name_value, sessions AS n, bounces, duration AS total_duration,
    pageviews AS views, revenue AS money, {{rollup_visitors}} AS numbered, CAST([], 'Array(UInt128)') AS unnumbered
  FROM {{rollups}}
  WHERE project_id = {project:String} AND version = {version:UInt64} AND dimension = {dimension:String}
    AND {{> sealed_rollup_rows}}
    {{rollup_filters}}
{{counted}}
{{sessions}}
{{live_part}}
)
GROUP BY prefix_value, name_value
ORDER BY sessions DESC, prefix ASC NULLS LAST, name ASC NULLS LAST
LIMIT {limit:UInt32} OFFSET {offset:UInt64}
