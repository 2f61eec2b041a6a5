-- Every dimension's revenue by UTC day of the event and the value of its session sealed whole
-- (sql/schema/039_sealed_dimension_revenue.sql), one grouping set per dimension as
-- sealed_build_rollups.sql groups the sessions.
INSERT INTO sealed_dimension_revenue (project_id, version, dimension, day, prefix, value, revenue)
SELECT {project:String}, {version:UInt64}, dimension, day, prefix_value, value_of, revenue
FROM (
  SELECT day, {{dimension_of}} AS dimension, {{prefix_of}} AS prefix_value, {{value_of}} AS value_of, sum(r.revenue) AS revenue
  FROM (
    SELECT toStartOfDay(created_at) AS day, sno, revenue FROM sealed_revenue_events
    WHERE project_id = {project:String} AND version = {version:UInt64}
  ) AS r
  INNER JOIN (
    SELECT sno, {{attribute_names}} FROM sealed_sessions
    WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held AND revenue > 0
  ) AS s USING (sno)
  GROUP BY GROUPING SETS ({{grouping_sets}})
)
