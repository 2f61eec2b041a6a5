-- A build's row in sealed_builds, once its tables are written and compacted: with the sessions the
-- page tables hold out (kind 5) and their first event, which requests read whole, and the span of
-- the episodes funnels by person always read over the window (046), and the sessions started in the
-- `recent_days` before C (052).
INSERT INTO sealed_builds (project_id, version, format, closed_at, held_from, longest_ms, built_at, inserts_since, inserts, sessions, sessions_recent, build_ms,
  page_held, page_held_from, person_twofold_linked)
SELECT {project:String}, {version:UInt64}, {format:UInt16}, {closed:DateTime64(3, 'UTC')},
  ifNull((SELECT minOrNull(created_at) FROM sealed_sessions WHERE project_id = {project:String} AND version = {version:UInt64} AND held),
    {closed:DateTime64(3, 'UTC')}),
  (SELECT max(toUInt64(dateDiff('millisecond', created_at, ended_at))) FROM sealed_sessions
    WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held),
  {built:DateTime64(3, 'UTC')},
  {since:DateTime64(3, 'UTC')}, {inserts:UInt64},
  (SELECT count() FROM sealed_sessions WHERE project_id = {project:String} AND version = {version:UInt64}),
  (SELECT count() FROM sealed_sessions WHERE project_id = {project:String} AND version = {version:UInt64}
    AND created_at >= {closed:DateTime64(3, 'UTC')} - toIntervalDay({recent_days:UInt16})),
  {build_ms:UInt64},
  (SELECT groupArray(key) FROM sealed_page_keys WHERE project_id = {project:String} AND version = {version:UInt64} AND kind = 5),
  ifNull((
    SELECT minOrNull(created_at) FROM session_timeline
    WHERE project_id = {project:String} AND created_at < {closed:DateTime64(3, 'UTC')} AND session_key IN (
      SELECT key FROM sealed_page_keys WHERE project_id = {project:String} AND version = {version:UInt64} AND kind = 5)
  ), {closed:DateTime64(3, 'UTC')}),
  (SELECT if(count() = 0, [], [min(created_at), max(ended_at)]) FROM sealed_person_events
    WHERE project_id = {project:String} AND version = {version:UInt64} AND (twofold OR linked))
