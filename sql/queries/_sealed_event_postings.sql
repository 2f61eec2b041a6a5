-- The sessions sealed whole with an event that matches `predicate` (on name, origin or path), from
-- the UTC day of `from` on: the union of a build's postings (sql/schema/027_sealed_event_postings.sql),
-- as one bitmap (`sessions`: groupBitmapMergeState(sessions)) or as their numbers, one per row, for IN.
SELECT {{sessions}} FROM sealed_event_postings
WHERE project_id = {project:String} AND version = {version:UInt64} AND day >= toDate({{from}}) AND ({{predicate}})
