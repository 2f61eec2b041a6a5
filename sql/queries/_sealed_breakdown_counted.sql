-- The visitors of a breakdown's whole UTC days to C, counted by their last sealed day: the same
-- rows as the rollups' read, only `visitors_last` (no bitmap is read).
  UNION ALL
  SELECT prefix, value, 0, 0, 0, 0, 0, visitors_last, CAST([], 'Array(UInt128)')
  FROM sealed_rollup_last
  WHERE project_id = {project:String} AND version = {version:UInt64} AND dimension = {dimension:String}
    AND {{> sealed_rollup_rows}}
