-- /insights/{projectId}/user_flow: per unit (a session, or a person) its event names in time
-- order (ties by name), consecutive repeats collapsed; the units that have the start event (and
-- the end event with mode=between) keep the path the mode cuts from them; the three most frequent
-- first names of those paths are the entries. Rows: one per entry (kind 'entry') and one per
-- transition (source, target, position) over the paths that begin with an entry (kind 'link').
-- src/query/product/sankey.ts builds the graph from them.
--
-- Fragment slots (src/query/product/user-flow.ts): unit and links as in insights_funnel.sql;
-- names, the include/exclude condition on `name`; filters, the request's filters over events;
-- keep, which units have a path; path, the mode's path over `names`.
WITH
  units AS (
    SELECT {{unit}} AS unit, arrayCompact(arrayMap(x -> x.2, arraySort(groupArray((e.created_at, e.name))))) AS names
    FROM events AS e
    {{links}}
    WHERE e.project_id = {project:String}
      AND e.created_at >= {from:DateTime64(3, 'UTC')} AND e.created_at < {to:DateTime64(3, 'UTC')}
      AND unit != ''
      {{names}}
      {{filters}}
    GROUP BY unit
  ),
  paths AS (
    SELECT path FROM (SELECT {{path}} AS path FROM units WHERE {{keep}}) WHERE length(path) >= 2
  ),
  entries AS (
    SELECT path[1] AS entry, count() AS units FROM paths GROUP BY entry ORDER BY units DESC, entry LIMIT 3
  )
SELECT 'entry' AS kind, entry AS source, '' AS target, toUInt32(0) AS position, units FROM entries
UNION ALL
SELECT 'link' AS kind, source, target, position, count() AS units
FROM (
  SELECT path[position] AS source, path[position + 1] AS target, position
  FROM paths
  ARRAY JOIN arrayEnumerate(arrayPopBack(path)) AS position
  WHERE path[1] IN (SELECT entry FROM entries)
)
GROUP BY source, target, position
