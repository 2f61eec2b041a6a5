-- The inserts logged since a point, for each entry of parallel arrays (a project, its build's C, the
-- point counted from, and the newest insert a planner verified): all of them, and those that reached
-- before C; how many are logged up to `verified` now, and the earliest event (C at least) of the ones
-- logged after it, the only ones a check need read again. An entry with no insert has no row. One
-- statement for every project whose count is due at once: each statement takes a turn on chDB's one
-- line for parameterized statements (issue 19's uncached phase: see benchmarks/README.md).
SELECT entry,
  count() AS inserts,
  countIf(earliest < closed) AS closed_inserts,
  max(logged_at) AS last_logged,
  countIf(logged_at <= verified) AS verified_inserts,
  greatest(any(closed), minIf(earliest, logged_at > verified)) AS unverified_from
FROM (
  SELECT entry, earliest, logged_at,
    {inserts_closed:Array(DateTime64(3, 'UTC'))}[entry] AS closed, {inserts_verified:Array(DateTime64(3, 'UTC'))}[entry] AS verified
  FROM event_inserts
  ARRAY JOIN arrayFilter(
    i -> {inserts_projects:Array(String)}[i] = project_id AND logged_at >= {inserts_since:Array(DateTime64(3, 'UTC'))}[i],
    arrayEnumerate({inserts_projects:Array(String)})) AS entry
  WHERE project_id IN {inserts_projects:Array(String)} AND logged_at >= arrayMin({inserts_since:Array(DateTime64(3, 'UTC'))})
)
GROUP BY entry
