-- A session row as OpenPanel's session routes return it. Quarry's sessions are derived from the
-- events and keep no coordinates (null here), and have no sign or version: each session is one row.
id, project_id, profile_id, device_id, groups, created_at, ended_at, CAST(is_bounce, 'Bool') AS is_bounce,
entry_origin, entry_path, exit_origin, exit_path, screen_view_count, revenue, event_count, duration,
country, region, city, CAST(NULL, 'Nullable(Float32)') AS longitude, CAST(NULL, 'Nullable(Float32)') AS latitude,
device, brand, model, browser, browser_version, os, os_version,
utm_medium, utm_source, utm_campaign, utm_content, utm_term, referrer, referrer_name, referrer_type
