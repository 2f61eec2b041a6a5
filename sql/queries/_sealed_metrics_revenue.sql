-- The revenue events of a filtered sealed /metrics window: those of the sessions sealed whole that
-- pass the filters and may overlap the window (begun up to the build's longest session before it),
-- from the build's revenue events; then those of the live sessions that pass
-- (_sealed_metrics_revenue_live.sql). Filters all on the postings' columns are conditions on the
-- session's number alone, which the revenue events carry, so they apply to them directly
-- (`revenue_sessions`); others pick the passing sessions (_sealed_revenue_sessions.sql).
SELECT created_at, revenue FROM sealed_revenue_events
    WHERE project_id = {project:String} AND version = {version:UInt64}
      AND created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
      {{revenue_sessions}}
    UNION ALL
    {{> sealed_metrics_revenue_live}}
