-- The sessions with an event from C on, whole: their events from C on, added to the row the build
-- sealed for them when they began before C (`held`), with each visitor's number when the visitor
-- has one (0 otherwise: a visitor first seen after C). The planner has checked that no other
-- sealed session has events from C on.
live_parts AS (
  SELECT
    if(h.held, h.created_at, t.created_at) AS created_at,
    t.ended_at AS ended_at,
    t.id AS id,
    t.session_key AS session_key,
    if(h.held, h.profile_key, t.profile_key) AS profile_key,
    h.vno AS held_vno,
    h.screen_view_count + t.screen_view_count AS screen_view_count,
    h.revenue + t.revenue AS revenue,
    if(h.held, least((h.entry_at, h.entry_origin, h.entry_path), t.entry), t.entry) AS entry,
    if(h.held, greatest((h.exit_at, h.exit_origin, h.exit_path), t.exit), t.exit) AS exit,
    {{live_attributes}}
  FROM (
    SELECT {{> session_of_events}}
    FROM (
      SELECT *, created_at AS t FROM events
      WHERE project_id = {project:String} AND created_at >= {closed:DateTime64(3, 'UTC')} AND session_id != ''
    )
    GROUP BY session_id
  ) AS t
  LEFT JOIN (
    SELECT * FROM sealed_sessions
    WHERE project_id = {project:String} AND version = {version:UInt64} AND held AND created_at >= {held_from:DateTime64(3, 'UTC')}
  ) AS h USING (session_key)
),
live AS (
  SELECT
    p.*,
    if(p.held_vno != 0, p.held_vno, v.vno) AS vno,
    toUInt64(dateDiff('millisecond', p.created_at, p.ended_at)) AS duration,
    p.screen_view_count <= 1 AS is_bounce,
    tupleElement(p.entry, 2) AS entry_origin,
    tupleElement(p.entry, 3) AS entry_path,
    tupleElement(p.exit, 2) AS exit_origin,
    tupleElement(p.exit, 3) AS exit_path
  FROM live_parts AS p
  LEFT JOIN (
    SELECT profile_key, min(vno) AS vno FROM sealed_visitors
    WHERE project_id = {project:String} AND profile_key IN (
      SELECT reinterpretAsUInt128(sipHash128(profile_id)) FROM events
      WHERE project_id = {project:String} AND created_at >= {closed:DateTime64(3, 'UTC')}
    )
    GROUP BY profile_key
  ) AS v USING (profile_key)
)
