-- /export/charts: one series of a chart (one query per requested series).
--
-- period 0 is the requested window, period 1 the previous one (read only when previous=true:
-- {earliest} is then its start, else {earliest} = {from}). l0..l2 are the breakdown values ('' for
-- an unused slot). Rows with is_total = 0 are buckets (unix seconds of the bucket's start in the
-- request's timezone) with the segment's value; rows with is_total = 1 are a group's totals over
-- the whole period, where only `profiles` (exact distinct profiles) is read.
--
-- Only the top {limit} breakdown groups are returned, ranked by the sum of their period-0 bucket
-- values (ties by the labels); a group without any period-0 event is not a series.
--
-- Fragment slots (named without their braces here, since a slot is replaced wherever it appears):
-- bucket, the bucket expression; labels, three `… AS lN` expressions; measure, the property value
-- (property segments); conditions, ` AND …` predicates (event name, series filters, segment
-- requirements); dedupe, the one_event_per_user reduction (each profile keeps only its latest event
-- of the period) or nothing; value, the segment's aggregate. All come from allow-lists in
-- src/query/charts.ts; values are {name:Type} parameters. group_join, with group_id, is the ARRAY JOIN
-- of the events' group ids and the join of their `groups` rows (the group segment and group.*
-- breakdowns), or nothing and ''.
SELECT period, bucket, is_total, value, profiles, l0, l1, l2
FROM (
  SELECT *, dense_rank() OVER (ORDER BY group_sum DESC, l0, l1, l2) AS group_rank
  FROM (
    SELECT
      *,
      sumIf(value, period = 0 AND is_total = 0) OVER (PARTITION BY l0, l1, l2) AS group_sum,
      countIf(period = 0) OVER (PARTITION BY l0, l1, l2) AS current_rows
    FROM (
      SELECT
        period,
        bucket,
        l0,
        l1,
        l2,
        grouping(bucket) AS is_total,
        {{value}} AS value,
        uniqExactIf(profile_id, profile_id != '') AS profiles
      FROM (
        SELECT
          if(created_at >= {from:DateTime64(3, 'UTC')}, 0, 1) AS period,
          {{bucket}} AS bucket,
          {{labels}},
          profile_id,
          session_id,
          {{group_id}} AS group_id,
          {{measure}} AS measure
        FROM events
        {{group_join}}
        WHERE project_id = {project:String}
          AND created_at >= {earliest:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
          {{conditions}}
        {{dedupe}}
      )
      GROUP BY GROUPING SETS ((period, l0, l1, l2, bucket), (period, l0, l1, l2))
    )
  )
  WHERE current_rows > 0
)
WHERE group_rank <= {limit:UInt32}
