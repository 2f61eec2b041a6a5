-- The sealed tables in which one build of a project has more than one part: a table one
-- statement wrote is one part already, and compacting it would only write it again (sealed_sessions
-- on a 5M-event project: 2.1–2.8 s for one part, 12.2 s for the two a default insert made). Asked of
-- the parts' catalogue, by the partition's text as ClickHouse writes a (project, version) tuple:
-- counting `uniqExact(_part)` in each table read every row of the build (1.2 s on the requests' line
-- per build of L). Right after its steps a build has rows in the tables they wrote and no other.
SELECT table AS name
FROM system.parts
WHERE {{> sealed_build_parts}}
GROUP BY table
HAVING count() > 1
