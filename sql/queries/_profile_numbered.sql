-- The `numbered` CTE of _profile_days.sql from the events: each profile of the events outside the
-- sealed hours with each of its days, and its sealed number, or, first seen after the build, one
-- from 2^31 on (sealed numbers count visitors, far below), so that every profile is one number in
-- every bitmap without reading the project's highest number.
  tail AS (
    SELECT reinterpretAsUInt128(sipHash128(profile_id)) AS profile_key, groupUniqArray({{bucket}}(created_at, {tz:String})) AS days
    FROM events
    WHERE project_id = {project:String} AND profile_id != '' AND (profile_id != device_id OR NOT {identified:Bool})
      AND ((created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {hours_from:DateTime64(3, 'UTC')})
        OR (created_at >= {hours_to:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}))
    GROUP BY profile_key
  ),
  numbered AS (
    SELECT day, vno
    FROM (
      SELECT t.days AS days, if(v.vno != 0, v.vno, toUInt32(2147483648 + row_number() OVER (ORDER BY t.profile_key))) AS vno
      FROM tail AS t
      LEFT JOIN (
        SELECT profile_key, min(vno) AS vno FROM sealed_visitors
        WHERE project_id = {project:String} AND profile_key IN (SELECT profile_key FROM tail)
        GROUP BY profile_key
      ) AS v USING (profile_key)
    )
    ARRAY JOIN days AS day
  )
