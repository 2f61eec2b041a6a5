-- A sealed session's id: no request reads it (they match sealed sessions by session_key, the id's
-- hash), and it took 79 of L's 311 MiB of sealed sessions a build. Builds from now on are written
-- without it; dropping a column rewrites no other.
ALTER TABLE sealed_sessions DROP COLUMN IF EXISTS id;
