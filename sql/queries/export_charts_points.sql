-- /export/charts in a streamed format: the assembled chart's points, one row each, from the
-- JSONEachRow text of the `points` parameter, in the order given. Slots: breakdowns and date, as
-- the format types them (a map or JSON text; a UTC timestamp or the ISO text with its offset);
-- limit, empty or a LIMIT with a number code chose (HEAD's size sample).
SELECT
  seriesId,
  event,
  {{breakdowns}} AS breakdowns,
  {{date}} AS date,
  count,
  previous
FROM format(
  JSONEachRow,
  'seriesId String, event String, breakdowns Map(String, String), date String, count Float64, previous Nullable(Float64)',
  {points:String}
)
{{limit}}
