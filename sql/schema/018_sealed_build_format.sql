-- What a sealed build holds, as a number (src/query/sealed.ts, SEALED_FORMAT): builds of an older
-- format (0: before the hourly event rollups of 013) lack tables that requests read, so they answer
-- nothing and the next build replaces them. Its own file, so that a directory that applied 013 as
-- first committed gets it too.
ALTER TABLE sealed_builds ADD COLUMN IF NOT EXISTS format UInt16 DEFAULT 0;
