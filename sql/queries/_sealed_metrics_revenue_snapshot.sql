-- The revenue events of a sealed /metrics window whose whole hours run from its start to C: those
-- from C on, as written for the events' stamp (sealed_live_events).
SELECT created_at, revenue FROM sealed_live_events
    WHERE project_id = {project:String} AND version = {version:UInt64} AND stamp = {events_stamp:UInt64}
      AND name = 'revenue' AND created_at >= {rollup_to:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
