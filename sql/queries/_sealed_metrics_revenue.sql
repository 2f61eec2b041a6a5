-- The revenue events of a filtered sealed /metrics window: those of the sessions sealed whole that
-- pass the filters and may overlap the window (begun up to the build's longest session before it),
-- from the build's revenue events; then those of the live sessions that pass, from the events
-- after the earliest held session's start (no session sealed whole has one there).
SELECT created_at, revenue FROM sealed_revenue_events
    WHERE project_id = {project:String} AND version = {version:UInt64}
      AND created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
      AND sno IN (
        SELECT sno FROM sealed_sessions
        WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held AND revenue > 0
          AND created_at >= {{overlap_from}} AND created_at < {to:DateTime64(3, 'UTC')}
          {{sealed_filters}})
    UNION ALL
    SELECT created_at, revenue FROM events
    WHERE project_id = {project:String} AND name = 'revenue'
      AND created_at >= greatest({earliest:DateTime64(3, 'UTC')}, {held_from:DateTime64(3, 'UTC')}) AND created_at < {to:DateTime64(3, 'UTC')}
      AND session_id IN (SELECT id FROM live WHERE revenue > 0 {{live_filters}})
