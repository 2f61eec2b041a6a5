-- The inputs of insights_funnel_people_sealed.sql's held people from their snapshot for the events
-- after C as they are (sql/schema/046_sealed_live_held.sql), for a window without `linked` or
-- `twofold` episodes and a funnel window within the episodes' gap: the same rows as
-- _funnel_people_held.sql, from a few thousand rows instead of two passes over the window (L, 30
-- days: 519 -> 280 ms of CPU for the statement).
  (
    SELECT groupArray((toUInt64(toUnixTimestamp64Milli(created_at)), names[1], key, other))
    FROM sealed_live_held
    WHERE project_id = {project:String} AND version = {version:UInt64} AND stamp = {stamp:UInt64} AND kind = 0
      AND created_at >= {live_from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  ) AS live_events,
  candidates AS (
    SELECT key AS device_key, other AS profile_key, day, times
    FROM sealed_live_held
    WHERE project_id = {project:String} AND version = {version:UInt64} AND stamp = {stamp:UInt64} AND kind = 1
      AND key IN (SELECT device_key FROM live WHERE profile_key = device_key AND device_key != 0)
      AND day >= toDate({from:DateTime64(3, 'UTC')}) AND day <= toDate({to:DateTime64(3, 'UTC')})
  ),
  episodes AS (
    SELECT key AS profile_key, vno, anonymous, times, names
    FROM sealed_live_held
    WHERE project_id = {project:String} AND version = {version:UInt64} AND stamp = {stamp:UInt64} AND kind = 2
      AND key IN (SELECT arrayJoin(arrayConcat(link_map.1, link_map.2, arrayMap(e -> e.3, live_events), arrayMap(e -> e.4, live_events))))
      AND created_at < {to:DateTime64(3, 'UTC')} AND ended_at >= {from:DateTime64(3, 'UTC')}
  ),
