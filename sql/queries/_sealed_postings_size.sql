-- One row of sealed_postings_sizes.sql: set `set`'s sessions from the UTC day of `from` on, and the
-- sessions sealed whole from that day on.
SELECT {{set}} AS set,
  (SELECT bitmapCardinality(groupBitmapMergeState(sessions)) FROM sealed_event_postings
   WHERE project_id = {project:String} AND version = {version:UInt64} AND day >= toDate({{from}}) AND ({{predicate}})) AS posted,
  (SELECT count() FROM sealed_sessions
   WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held AND created_at >= toStartOfDay({{from}})) AS sealed
