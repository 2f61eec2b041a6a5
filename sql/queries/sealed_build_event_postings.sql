-- Per UTC day and distinct ({{posted_columns}}) of the events before C, the sessions sealed whole
-- that have such an event (sql/schema/027_sealed_event_postings.sql). Every event of a session
-- counts, whatever its day: a filter asks whether a session has a matching event at all.
INSERT INTO sealed_event_postings (project_id, version, day, {{posted_columns}}, sessions)
SELECT {project:String}, {version:UInt64}, toDate(e.created_at) AS day, {{posted_columns}}, groupBitmapState(n.sno)
FROM (
  SELECT created_at, {{posted_columns}}, reinterpretAsUInt128(sipHash128(session_id)) AS session_key
  FROM events
  WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')} AND session_id != ''
) AS e
INNER JOIN (
  SELECT session_key, sno FROM sealed_sessions WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held
) AS n USING (session_key)
GROUP BY day, {{posted_columns}}
