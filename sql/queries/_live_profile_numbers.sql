-- The number of each profile in `profiled` (a CTE of the profile keys of the events after C): its
-- sealed number, or from 2^31 on for one first seen after C (sealed numbers count visitors, far
-- below), in the order of the keys, so that every snapshot of one state of the events numbers a
-- profile alike (sealed_live_profiles_write.sql, sealed_live_events_write.sql).
SELECT profile_key, if(v.vno != 0, v.vno, toUInt32(2147483648 + row_number() OVER (ORDER BY profile_key))) AS vno
    FROM (SELECT DISTINCT profile_key FROM profiled) AS t
    LEFT JOIN (
      SELECT profile_key, min(vno) AS vno FROM sealed_visitors
      WHERE project_id = {project:String} AND profile_key IN (SELECT profile_key FROM profiled)
      GROUP BY profile_key
    ) AS v USING (profile_key)
