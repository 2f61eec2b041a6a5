-- The inputs of insights_funnel_people_sealed.sql's held people, read per request: the events after C
-- in the window (`live_events`), the identified days before C of the devices to link (`candidates`:
-- those of `linked` episodes in the window and those anonymous after C), and the held episodes in
-- the window (`episodes`: a pass over the window's episodes, testing each key).
  (
    SELECT groupArray((toUInt64(toUnixTimestamp64Milli(created_at)), name,
      if(device_id = '', toUInt128(0), reinterpretAsUInt128(sipHash128(device_id))),
      if(profile_id = '', toUInt128(0), reinterpretAsUInt128(sipHash128(profile_id)))))
    FROM events
    WHERE project_id = {project:String} AND created_at >= {live_from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  ) AS live_events,
  candidates AS (
    SELECT device_key, profile_key, day, times
    FROM sealed_device_profiles
    WHERE project_id = {project:String} AND version = {version:UInt64}
      AND device_key IN (
        SELECT profile_key FROM sealed_person_events
        WHERE project_id = {project:String} AND version = {version:UInt64} AND linked
          AND created_at < {to:DateTime64(3, 'UTC')} AND ended_at >= {from:DateTime64(3, 'UTC')}
        UNION ALL
        SELECT device_key FROM live WHERE profile_key = device_key AND device_key != 0)
      AND day >= toDate({from:DateTime64(3, 'UTC')}) AND day <= toDate({to:DateTime64(3, 'UTC')})
  ),
  episodes AS (
    SELECT profile_key, vno, anonymous, times, names
    FROM sealed_person_events
    PREWHERE {grouped:Bool} OR twofold OR profile_key IN (
      SELECT arrayJoin(arrayConcat(link_map.1, link_map.2, arrayMap(e -> e.3, live_events), arrayMap(e -> e.4, live_events))))
    WHERE project_id = {project:String} AND version = {version:UInt64}
      AND created_at < {to:DateTime64(3, 'UTC')} AND ended_at >= {from:DateTime64(3, 'UTC')}
  ),
