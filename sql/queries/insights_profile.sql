-- /insights/{projectId}/profiles/{profileId}: the stored profile; failing that, for a visitor
-- with events but no row (Quarry stores no rows for anonymous visitors), the same columns empty,
-- first and last seen from its events. No row at all: the profile is unknown.
SELECT {{> profile_columns}}
FROM (
  SELECT {{> profile_columns}}, 1 AS stored
  FROM profiles FINAL
  WHERE project_id = {project:String} AND id = {profile:String}
  UNION ALL
  -- Aggregated under names of their own: an alias named like a column would capture it in the
  -- WHERE and the aggregates.
  SELECT
    {profile:String} AS id, '' AS first_name, '' AS last_name, '' AS email, '' AS avatar,
    CAST(map(), 'Map(String, String)') AS properties, {project:String} AS project_id,
    toBool(identified) AS is_external, first_seen AS created_at, last_seen AS last_seen_at,
    CAST([], 'Array(String)') AS groups, 0 AS stored
  FROM (
    SELECT min(created_at) AS first_seen, max(created_at) AS last_seen, countIf(profile_id != device_id) > 0 AS identified, count() AS seen
    FROM events
    WHERE project_id = {project:String} AND profile_id = {profile:String}
  )
  WHERE seen > 0
)
ORDER BY stored DESC
LIMIT 1
