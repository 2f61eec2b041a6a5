-- The person each device identified as inside the window: the profile of its first event whose
-- profile is not the device itself. Joined as `links` on the device, so that groupBy=profile_id
-- counts a device's anonymous events as the person it later (or earlier) identified as.
LEFT JOIN (
  SELECT device_id AS linked_device, argMin(profile_id, created_at) AS person
  FROM events
  WHERE project_id = {project:String}
    AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
    AND profile_id != device_id AND profile_id != '' AND device_id != ''
  GROUP BY linked_device
) AS links ON links.linked_device = e.device_id
