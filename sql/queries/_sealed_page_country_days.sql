-- The whole UTC days [days_from, days_to) of a /pages window filtered on the session's country
-- alone, from the day rows by country (sql/schema/048_sealed_page_countries.sql): the filters
-- (`session_filters`) keep a row with all its views and entries or none (L, 30d, `country is US`:
-- the statement 1,328 -> 356 ms of CPU, the same rows).
SELECT origin, path, views, duration_ms, durations, titles,
      sessions, visitors, toUInt64(0) AS new_sessions, toUInt64(0) AS new_visitors,
      entries, bounces
    FROM sealed_page_countries
    WHERE project_id = {project:String} AND version = {version:UInt64}
      AND day >= toDate({days_from:DateTime64(3, 'UTC')}) AND day < toDate({days_to:DateTime64(3, 'UTC')})
      {{session_filters}}
