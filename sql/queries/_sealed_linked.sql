-- Whether a row of sealed_session_events holds an anonymous event (profile_id = device_id) of a
-- device that has an identified event before C: a superset of the devices a window can link to a
-- person, which requests look for among the rows of identified events.
max(profile_id = device_id AND device_id != '' AND device_id IN (
    SELECT device_id FROM events
    WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')}
      AND profile_id != device_id AND profile_id != '' AND device_id != ''))
