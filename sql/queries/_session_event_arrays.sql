-- A row of sealed_session_events from its group of events (sealed_build_session_events.sql,
-- sealed_build_session_parts.sql): their first and last time, their session's key, and their times
-- in ms and names as arrays, sorted by time, then name.
min(created_at), max(created_at), reinterpretAsUInt128(sipHash128(session_id)),
  arrayMap(x -> x.1, arraySort(groupArray((toUInt64(toUnixTimestamp64Milli(created_at)), name))) AS events), arrayMap(x -> x.2, events)
