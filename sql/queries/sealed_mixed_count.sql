-- How many sessions of a build hold several (device, profile) pairs: the builder writes their rows per pair only when there are some.
SELECT count() AS mixed_sessions FROM sealed_session_events WHERE project_id = {project:String} AND version = {version:UInt64} AND mixed
