-- /insights/{projectId}/funnel: per unit (a session, or a person), the longest prefix of the
-- steps it completed in order, each step strictly later than the one before and within the
-- window of its first step (ClickHouse's windowFunnel, 'strict_increase'); then how many units
-- reached each level. Only events inside [from, to) count. windowFunnel keeps one chain per level,
-- the one with the latest start, and takes events of the same time in the order of the steps: a
-- second first step at the time of the next step then replaced the chain that step continues, and
-- the unit stopped short. So each step's events are placed 1/16 ms before the previous step's
-- (times and {window} in 1/16 ms, step k at 15 - k): events of one time are taken last step first, never chain
-- among themselves, and every window holds the same events as in ms. ('strict_once' follows every
-- chain instead, but its lists grow with a person's events: 30 days by profile took over 10 s.)
--
-- Fragment slots (src/query/product/funnel.ts): unit, the unit's expression; links, the person
-- links of _person_links.sql or nothing; conditions, one `name = {…}` per step; filters, the
-- request's filters as ` AND …` over events.
SELECT level, count() AS units
FROM (
  SELECT
    {{unit}} AS unit,
    windowFunnel({window:UInt64}, 'strict_increase')(
      toUInt64(toUInt64(toUnixTimestamp64Milli(e.created_at)) * 16 + 15 - indexOf({steps:Array(String)}, e.name)), {{conditions}}) AS level
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
