-- The revenue events of a sealed /metrics window whose filters are all on the page: before C from
-- the build's (sql/schema/032_sealed_page_revenue.sql), from C on from the events. The day of C is
-- said apart for the events' key (see _sealed_metrics_revenue.sql).
SELECT created_at, revenue FROM sealed_page_revenue
    WHERE project_id = {project:String} AND version = {version:UInt64}
      AND created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < least({to:DateTime64(3, 'UTC')}, {closed:DateTime64(3, 'UTC')})
      {{revenue_filters}}
    UNION ALL
    SELECT created_at, revenue FROM events
    WHERE project_id = {project:String} AND name = 'revenue'
      AND created_at >= greatest({earliest:DateTime64(3, 'UTC')}, {closed:DateTime64(3, 'UTC')}) AND created_at < {to:DateTime64(3, 'UTC')}
      AND toDate(created_at) >= toDate(greatest({earliest:DateTime64(3, 'UTC')}, {closed:DateTime64(3, 'UTC')}))
      {{revenue_filters}}
