-- The sealed numbers of the profiles of a chart's events outside its rollup hours (hole_events: the
-- hours its buckets split as well), looked up by key (none for a profile first seen after the build).
SELECT profile_key, min(vno) AS vno FROM sealed_visitors
WHERE project_id = {project:String} AND profile_key IN (
  SELECT reinterpretAsUInt128(sipHash128(profile_id)) FROM events
  WHERE project_id = {project:String}
    AND ((created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {rollup_from:DateTime64(3, 'UTC')})
      OR (created_at >= {rollup_to:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}){{hole_events}})
)
GROUP BY profile_key
