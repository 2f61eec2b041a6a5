-- The sealed tables that hold a part of one build: what dropping the build drops. From the parts'
-- catalogue, so that a table added to the schema is dropped with its build without a list to keep
-- (a list kept by hand had missed sealed_live_held). The build's row last: while any of its rows
-- remain, the build is still listed.
SELECT DISTINCT table AS name
FROM system.parts
WHERE {{> sealed_build_parts}}
ORDER BY name = 'sealed_builds', name
