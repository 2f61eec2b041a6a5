-- One session from its events, as sessions_mv (sql/schema/008) makes it: first-event attributes
-- with the smallest value at equal times, entry and exit among screen views only (other events
-- carry a sentinel that loses). Used inside `GROUP BY session_id` over events with their time as `t`
-- (an alias `created_at` would shadow the column in the statement's WHERE).
min(t) AS created_at,
max(t) AS ended_at,
session_id AS id,
reinterpretAsUInt128(sipHash128(session_id)) AS session_key,
reinterpretAsUInt128(sipHash128(tupleElement(min((t, profile_id)), 2))) AS profile_key,
toUInt64(countIf(name = 'screen_view')) AS screen_view_count,
toUInt64(count()) AS event_count,
toUInt64(sumIf(revenue, name = 'revenue')) AS revenue,
min(if(name = 'screen_view', (t, origin, path), (toDateTime64('2299-12-31 00:00:00', 3, 'UTC'), '', ''))) AS entry,
max(if(name = 'screen_view', (t, origin, path), (toDateTime64(0, 3, 'UTC'), '', ''))) AS exit,
{{first_attributes}}
