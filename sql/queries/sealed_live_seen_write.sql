-- The last day before C each live session's numbered visitor had a sealed session with each
-- dimension's value (see sealed_live_seen), from C's day minus {seen_days} on: one read of those
-- days' sealed sessions, kept to the live visitors, once per state of the events after C.
INSERT INTO sealed_live_seen (project_id, version, stamp, dimension, prefix, value, vno, seen)
WITH
{{> sealed_live}}
SELECT {project:String}, {version:UInt64}, {stamp:UInt64}, valued.1, valued.2, valued.3, vno, max(toDate(created_at))
FROM sealed_sessions
ARRAY JOIN [{{dimension_values}}] AS valued
WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held
  AND created_at >= toStartOfDay({closed:DateTime64(3, 'UTC')}) - toIntervalDay({seen_days:UInt16})
  AND vno IN (SELECT vno FROM live WHERE vno != 0)
GROUP BY valued.1, valued.2, valued.3, vno
