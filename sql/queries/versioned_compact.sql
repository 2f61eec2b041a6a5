-- One build of a project, merged into one part of one of its versioned tables (page rollups, sealed
-- history): its statements wrote several, and reads of a fresh build were 13 % slower for it on the
-- demo (94.5 against 81.9 ms).
OPTIMIZE TABLE {{table}} PARTITION ({project:String}, {version:UInt64}) FINAL
