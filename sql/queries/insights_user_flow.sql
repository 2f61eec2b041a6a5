-- /insights/{projectId}/user_flow: per unit (a session, or a person) its event names in time
-- order (ties by name), consecutive repeats collapsed; the units that have the start event (and
-- the end event with mode=between) keep the path the mode cuts from them; the three most frequent
-- first names of those paths are the entries. Rows: one per entry (kind 'entry', position 0) and
-- one per transition (source, target, position) over the paths that begin with an entry (kind 'link').
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
  )
{{> user_flow_paths}}
