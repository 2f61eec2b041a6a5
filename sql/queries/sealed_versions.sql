-- The builds of a project stored before a given one, whether registered or left by a build that
-- did not finish: the versions of its partitions in any sealed table. Asked of the parts' catalogue,
-- each partition's text as ClickHouse writes a (project, version) tuple: reading the tables'
-- `version` column read every row of the old builds, on the requests' line (M: 46 ms against 14;
-- drops-lane.ts).
-- Other partitions (other projects', sealed_visitors' `tuple()`) parse as 0 and fail the prefix.
SELECT DISTINCT toUInt64OrZero(substring(partition, length(prefix) + 1, length(partition) - length(prefix) - 1)) AS version
FROM system.parts, (SELECT substring(toString(({project:String}, toUInt64(0))), 1, -2) AS prefix) AS p
WHERE database = currentDatabase() AND active AND startsWith(table, 'sealed_')
  AND startsWith(partition, prefix) AND version < {keep:UInt64}
