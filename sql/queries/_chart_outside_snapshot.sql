-- The events of a sealed chart outside its rollup rows when they are all from C on (from
-- sealed_to): the events after C as written for the stamp (sealed_live_events), every profile
-- numbered there.
-- `event_conditions`: ` AND …` the series' name, profiled events only.
SELECT created_at, vno, toUInt128(0) AS profile_key, vno != 0 AS profiled
      FROM sealed_live_events
      WHERE project_id = {project:String} AND version = {version:UInt64} AND stamp = {events_stamp:UInt64}
        AND created_at >= {sealed_to:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
        {{event_conditions}}
