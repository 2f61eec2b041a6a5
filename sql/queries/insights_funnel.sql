-- /insights/{projectId}/funnel: per unit (a session, or a person), the longest prefix of the
-- steps it completed in order, each step strictly later than the one before and within the
-- window of its first step (ClickHouse's windowFunnel, 'strict_increase'); then how many units
-- reached each level. Only events inside [from, to) count. 'strict_once' makes windowFunnel follow
-- every partial chain: without it a second first step at the time of the next step replaces the
-- chain that step would have continued, and the unit stops short.
--
-- Fragment slots (src/query/product/funnel.ts): unit, the unit's expression; links, the person
-- links of _person_links.sql or nothing; conditions, one `name = {…}` per step; filters, the
-- request's filters as ` AND …` over events.
SELECT level, count() AS units
FROM (
  SELECT
    {{unit}} AS unit,
    windowFunnel({window_ms:UInt64}, 'strict_increase', 'strict_once')(toUInt64(toUnixTimestamp64Milli(e.created_at)), {{conditions}}) AS level
  FROM events AS e
  {{links}}
  WHERE e.project_id = {project:String}
    AND e.created_at >= {from:DateTime64(3, 'UTC')} AND e.created_at < {to:DateTime64(3, 'UTC')}
    AND e.name IN {steps:Array(String)}
    AND unit != ''
    {{filters}}
  GROUP BY unit
)
WHERE level > 0
GROUP BY level
ORDER BY level
