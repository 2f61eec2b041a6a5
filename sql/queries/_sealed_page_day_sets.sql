sessions, visitors, toUInt64(0) AS new_sessions, toUInt64(0) AS new_visitors
