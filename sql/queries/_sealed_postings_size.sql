-- One row of sealed_postings_sizes.sql: set `set`'s sessions from the UTC day of `from` on
-- (`posted`: _sealed_event_postings.sql counting them), and the sessions sealed whole from that day on.
SELECT {{set}} AS set,
  ({{posted}}) AS posted,
  (SELECT count() FROM sealed_sessions
   WHERE project_id = {project:String} AND version = {version:UInt64} AND NOT held AND created_at >= toStartOfDay({{from}})) AS sealed
