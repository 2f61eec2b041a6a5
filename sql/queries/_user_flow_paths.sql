-- The rows of the user flow from its `units` CTE (a column `names` per unit), shared by
-- insights_user_flow.sql and insights_user_flow_sealed.sql; the fragment slots keep and path are theirs.
-- One pass over the paths (a CTE read twice is computed twice): per first name, its paths (position
-- 0) and its transitions; the three first names with the most paths are kept. Equal paths are
-- counted before they are cut into transitions: a few thousand distinct paths instead of every
-- unit's (L, 30 days: 474,351 paths). A path is part of its unit's names: units with one name
-- (most sessions: a page view or a run of them) are left out before paths are cut.
SELECT if(position = 0, 'entry', 'link') AS kind, source, target, position, sum(units) AS units
FROM (
  SELECT source, target, position, units, dense_rank() OVER (ORDER BY entry_units DESC, entry) AS entry_rank
  FROM (
    SELECT entry, source, target, position, units, sumIf(units, position = 0) OVER (PARTITION BY entry) AS entry_units
    FROM (
      SELECT path[1] AS entry, if(position = 0, entry, path[position]) AS source, if(position = 0, '', path[position + 1]) AS target,
        position, sum(paths) AS units
      FROM (SELECT path, count() AS paths FROM (SELECT {{path}} AS path FROM units WHERE {{keep}} AND length(names) >= 2) WHERE length(path) >= 2 GROUP BY path)
      ARRAY JOIN arrayConcat([0], arrayEnumerate(arrayPopBack(path))) AS position
      GROUP BY entry, source, target, position
    )
  )
)
WHERE entry_rank <= 3
GROUP BY kind, source, target, position
