-- A sealed session's event count: no request reads it (the /sessions route's `session.event_count`
-- filter reads `sessions`), and it took 10 MiB per build of L. Builds from now on are written
-- without it; dropping a column rewrites no other.
ALTER TABLE sealed_sessions DROP COLUMN IF EXISTS event_count;
