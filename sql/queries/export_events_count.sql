-- /export/events totalCount: exactly the predicate of the list (window, event names, profile,
-- filters), without the keyset position, so it is the length of a full cursor walk.
SELECT count() AS total
FROM events
WHERE {{predicate}}
