-- A build's sealed sessions that started in the SEEN_DAYS before C: the size that decides how a
-- breakdown counts its visitors. Counting them by their last day (047) reads no bitmap but adds a
-- statement part and a snapshot per state of the events after C; below about 400K such sessions the
-- bitmaps' union is cheaper (100M preset, bare SQL: M 60K sessions, country 29 -> 24 ms and entry
-- pages 46 -> 36 with bitmaps; L 1.5M, 28 -> 39 ms). A build made before this column reads as 0.
ALTER TABLE sealed_builds ADD COLUMN IF NOT EXISTS sessions_recent UInt64 DEFAULT 0;
