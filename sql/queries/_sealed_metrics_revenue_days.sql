-- The revenue events of a sealed /metrics window of whole UTC days filtered on one dimension's
-- value (or its prefix): those of the sessions sealed whole from the dimension's revenue by day and
-- value (sql/schema/039_sealed_dimension_revenue.sql, the filters on its rows: `revenue_days`),
-- then those of the live sessions that pass, from the events.
SELECT day AS created_at, revenue FROM {{revenue_days}}
    WHERE project_id = {project:String} AND version = {version:UInt64} AND dimension = {dimension:String}
      AND day >= {rollup_from:DateTime64(3, 'UTC')} AND day < {rollup_to:DateTime64(3, 'UTC')}
      {{rollup_filters}}
    UNION ALL
    {{> sealed_metrics_revenue_live}}
