-- A build's identified events before C per UTC day, device and profile (sql/schema/030_sealed_person_events.sql).
INSERT INTO sealed_device_profiles (project_id, version, day, device_key, profile_key, times)
SELECT {project:String}, {version:UInt64}, toDate(created_at) AS day, reinterpretAsUInt128(sipHash128(device_id)) AS device,
  reinterpretAsUInt128(sipHash128(profile_id)) AS profile, arraySort(groupArray(toUInt64(toUnixTimestamp64Milli(created_at))))
FROM events
WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')}
  AND profile_id != device_id AND profile_id != '' AND device_id != ''
GROUP BY day, device, profile
