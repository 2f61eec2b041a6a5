-- The events after C with their profiles' numbers, written for one state of those events (see
-- sealed_live_events), numbered as the profiles' snapshot numbers them (_live_profile_numbers.sql).
INSERT INTO sealed_live_events (project_id, version, stamp, name, created_at, vno, revenue)
WITH
  after AS (
    SELECT name, created_at, profile_id, reinterpretAsUInt128(sipHash128(profile_id)) AS profile_key, revenue
    FROM events
    WHERE project_id = {project:String} AND created_at >= {closed:DateTime64(3, 'UTC')}
  ),
  profiled AS (SELECT profile_key FROM after WHERE profile_id != ''),
  numbers AS ({{> live_profile_numbers}}
  )
SELECT {project:String}, {version:UInt64}, {stamp:UInt64}, a.name, a.created_at, if(a.profile_id = '', 0, n.vno), a.revenue
FROM after AS a
LEFT JOIN numbers AS n USING (profile_key)
