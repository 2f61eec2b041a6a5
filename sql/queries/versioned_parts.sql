-- How many parts one build of a project has in one of its versioned tables: a table one statement
-- wrote is one part already, and compacting it would only write it again (sealed_sessions on a
-- 5M-event project: 2.1–2.8 s for one part, 12.2 s for the two a default insert made).
SELECT uniqExact(_part) AS parts FROM {{table}} WHERE project_id = {project:String} AND version = {version:UInt64}
