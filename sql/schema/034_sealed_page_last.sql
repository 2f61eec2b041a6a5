-- A page's distinct sessions and visitors over whole UTC days that reach C, as sums instead of
-- unions of bitmaps. `sessions_last` and `visitors_last` count the (page, session number) and
-- (page, visitor number) pairs whose last view before C fell on that day (or block), so the pairs
-- seen on any day from D to C are the sum over the rows from D on: the cardinality of the union
-- of those rows' bitmaps. L, 30d UTC: merging the visitor bitmaps of 3 blocks and 6 days of 200
-- pages was 80 of the statement's 158 ms of CPU, the sessions' 30. Rows written before this hold 0.
ALTER TABLE sealed_page_days ADD COLUMN IF NOT EXISTS sessions_last UInt64 DEFAULT 0;

ALTER TABLE sealed_page_days ADD COLUMN IF NOT EXISTS visitors_last UInt64 DEFAULT 0;

-- The last UTC day before C on which each numbered visitor of a view after C viewed its page, among
-- the build's last days (sql/queries/_sealed_page_seen.sql): a window counted from its day rows
-- adds the visitors after C not seen on its days. Snapshots written before this are not read (a
-- process reads only its own).
ALTER TABLE sealed_live_pages ADD COLUMN IF NOT EXISTS seen Date DEFAULT 0;
