-- One build's active parts in the parts' catalogue (versioned_parts, sealed_build_tables): the
-- partition's text as ClickHouse writes a (project, version) tuple.
database = currentDatabase() AND active AND startsWith(table, 'sealed_')
  AND partition = toString(({project:String}, {version:UInt64}))
