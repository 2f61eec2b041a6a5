-- The events after C with their profiles' numbers, written for one state of those events (see
-- sealed_live_events), numbered as sealed_live_profiles_write.sql numbers them.
INSERT INTO sealed_live_events (project_id, version, stamp, name, created_at, vno, revenue)
WITH
  after AS (
    SELECT name, created_at, profile_id, reinterpretAsUInt128(sipHash128(profile_id)) AS profile_key, revenue
    FROM events
    WHERE project_id = {project:String} AND created_at >= {closed:DateTime64(3, 'UTC')}
  ),
  numbers AS (
    SELECT profile_key, if(v.vno != 0, v.vno, toUInt32(2147483648 + row_number() OVER (ORDER BY profile_key))) AS vno
    FROM (SELECT DISTINCT profile_key FROM after WHERE profile_id != '') AS t
    LEFT JOIN (
      SELECT profile_key, min(vno) AS vno FROM sealed_visitors
      WHERE project_id = {project:String} AND profile_key IN (SELECT profile_key FROM after WHERE profile_id != '')
      GROUP BY profile_key
    ) AS v USING (profile_key)
  )
SELECT {project:String}, {version:UInt64}, {stamp:UInt64}, a.name, a.created_at, if(a.profile_id = '', 0, n.vno), a.revenue
FROM after AS a
LEFT JOIN numbers AS n USING (profile_key)
