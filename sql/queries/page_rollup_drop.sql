-- One build of a project, removed whole from one of the rollup tables.
ALTER TABLE {{table}} DROP PARTITION ({project:String}, {version:UInt64})
