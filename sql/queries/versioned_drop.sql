-- One build of a project, removed whole from one of its versioned tables.
ALTER TABLE {{table}} DROP PARTITION ({project:String}, {version:UInt64})
