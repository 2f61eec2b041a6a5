-- Whether a row of sealed_session_events holds anonymous events (its profile, `row_profile`, is
-- its device, `row_device`) of a device that has an identified event before C: a superset of the
-- devices a window can link to a person, which requests look for among the rows of identified
-- events. Tested per row, not per event (4.4M rows instead of 15.1M events on L).
row_device = row_profile AND row_device != '' AND row_device IN (
    SELECT device_id FROM events
    WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')}
      AND profile_id != device_id AND profile_id != '' AND device_id != '')
