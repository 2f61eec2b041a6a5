-- What /pages adds after C for a build, written for one state of the events after C (see sealed_live_pages).
INSERT INTO sealed_live_pages (project_id, version, stamp, kind, created_at, origin, path, title, session_key, profile_key, vno, known, duration_ms, views, seen)
WITH
{{> sealed_live_pages}}
SELECT {project:String}, {version:UInt64}, {stamp:UInt64}, kind, created_at, origin, path, title, session_key, profile_key, vno, known, duration_ms, views, seen
FROM live_pages
