-- The versioned tables in which one build of a project has more than one part: a table one
-- statement wrote is one part already, and compacting it would only write it again (sealed_sessions
-- on a 5M-event project: 2.1–2.8 s for one part, 12.2 s for the two a default insert made). `parts`
-- holds one `SELECT '<table>' AS name, uniqExact(_part) AS parts FROM <table> WHERE …` per table of
-- COMPACTED_TABLES (src/services/sealed/builder.ts): one read for all of them, not one per table.
SELECT name
FROM (
  {{parts}}
)
WHERE parts > 1
