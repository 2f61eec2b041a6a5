-- The other sessions with events before C that may still cross it, by whether their last event
-- before C is a view (kind 3) or not (kind 4): what sealed_crossing checks the events after C
-- against. Those are the sessions with events from C on (held ones not held out) and the events
-- without a session (one key); every other session is sealed whole, and sealed_crossing's first
-- count already refuses the build at any event of theirs from C on. Keying every session here
-- took 68 MiB per build of L and a GROUP BY of its 15M events into 4.4M sessions.
INSERT INTO sealed_page_keys (project_id, version, kind, key)
SELECT {project:String}, {version:UInt64}, if(argMax(is_view, (created_at, id)), 3, 4), session_key
FROM session_timeline
WHERE {{> sealed_page_events}}
  AND session_key IN (
    SELECT session_key FROM session_timeline
    WHERE project_id = {project:String} AND created_at >= {closed:DateTime64(3, 'UTC')}
    UNION ALL
    SELECT reinterpretAsUInt128(sipHash128('')))
GROUP BY session_key
