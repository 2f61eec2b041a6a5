-- The live sessions of a build, written for one state of the events after C (see sealed_live).
INSERT INTO sealed_live (project_id, version, stamp, created_at, id, profile_key, vno, screen_view_count, revenue, duration,
  is_bounce, entry_origin, entry_path, exit_origin, exit_path, {{attribute_names}})
WITH
{{> sealed_live}}
SELECT {project:String}, {version:UInt64}, {stamp:UInt64}, created_at, id, profile_key, vno, screen_view_count, revenue, duration,
  is_bounce, entry_origin, entry_path, exit_origin, exit_path, {{attribute_names}}
FROM live
