-- Every other session with events before C, by whether its last event before C is a view (kind 3)
-- or not (kind 4): what sealed_crossing checks the events after C against.
INSERT INTO sealed_page_keys (project_id, version, kind, key)
SELECT {project:String}, {version:UInt64}, if(argMax(is_view, (created_at, id)), 3, 4), session_key
FROM session_timeline
WHERE {{> sealed_page_events}}
GROUP BY session_key
