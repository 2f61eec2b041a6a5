-- The revenue events of a sealed /metrics window outside its whole hours (`hole_events`: and in the
-- hours its buckets split), read from the events (with a `path` filter, those the filters keep).
SELECT created_at, revenue FROM events
    WHERE project_id = {project:String} AND name = 'revenue'
      AND ((created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {rollup_from:DateTime64(3, 'UTC')})
        OR (created_at >= {rollup_to:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}){{hole_events}})
      {{revenue_filters}}
