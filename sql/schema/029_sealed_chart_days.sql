-- Charts from the sealed history (/export/charts) read faster on long windows and after C.
--
-- The event rollups by UTC day as well as by hour (`hours`: 1 or 24, as sealed_rollups), so that a
-- 30-day chart merges 30 bitmaps of profiles per bucket set instead of 720. Existing rows are hours.
--
-- The profiles after C with their keys, so that a chart numbers the profiles of the events after C
-- from the snapshot of them (a few thousand rows) instead of looking each up in sealed_visitors,
-- whose index the keys of an hour of events fall on most of (L: about 100 of a 30-day chart's
-- 150 ms). A process reads only the snapshots it wrote itself (src/services/build-planner.ts), so
-- none written before this, without keys, is read.
ALTER TABLE sealed_event_rollups ADD COLUMN IF NOT EXISTS hours UInt8 DEFAULT 1 AFTER name;
ALTER TABLE sealed_live_profiles ADD COLUMN IF NOT EXISTS profile_key UInt128;
