-- The events of a sealed chart outside its rollup rows [sealed_from, sealed_to) (`hole_events`:
-- ` OR …` those of the split hours; `event_conditions`: ` AND …` the series' name, profiled events
-- only), with each profile's sealed number (_chart_profile_numbers.sql) or its key where it has none.
SELECT e.created_at AS created_at, v.vno AS vno, e.profile_key AS profile_key, e.profile_id != '' AS profiled
      FROM (
        SELECT created_at, profile_id, reinterpretAsUInt128(sipHash128(profile_id)) AS profile_key
        FROM events
        WHERE project_id = {project:String}
          AND ((created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {sealed_from:DateTime64(3, 'UTC')})
            OR (created_at >= {sealed_to:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}){{hole_events}})
          {{event_conditions}}
      ) AS e
      LEFT JOIN ({{> chart_profile_numbers}}
      ) AS v USING (profile_key)
