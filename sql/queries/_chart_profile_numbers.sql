-- The sealed numbers of every profile of the project (none for a profile first seen after the
-- build), for the chart's events outside its rollup hours. All of them, not those of the events'
-- keys: `profile_key IN (the events)` reads the events a second time and probes the index per key,
-- which cost more than the whole table on L (1.9M visitors; Kolkata 30d 555 -> 331 ms, a 10-minute
-- window 118 -> 104, benchmarks/README.md).
SELECT profile_key, min(vno) AS vno FROM sealed_visitors
WHERE project_id = {project:String}
GROUP BY profile_key
