-- /export/events: the project's events in the window, newest first, shaped as output objects.
-- `selected` picks the rows on the raw columns; the outer SELECT shapes them. Keeping the two
-- apart means the output aliases (id, properties, …) can never capture a name the predicate uses.
-- The sort spells out the table's key (toDate(created_at) before created_at) so ClickHouse reads
-- the parts in reverse key order and only sorts ids among equal instants: a whole-project export
-- streams without a full sort, and a page stops reading after OFFSET + LIMIT rows.
WITH selected AS (
  SELECT {{event_columns}}
  FROM events
  WHERE {{predicate}}
  ORDER BY toDate(created_at) DESC, created_at DESC, id ASC
  {{page}}
)
SELECT {{columns}}
FROM selected AS e
{{joins}}
{{order}}
