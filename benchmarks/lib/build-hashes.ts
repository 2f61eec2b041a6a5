import type { QueryRunner } from '../../src/clickhouse/run.ts'

/**
 * Prints each sealed table's rows of one build as a Markdown table: the row count and an order-free
 * sum of row hashes, bitmaps taken as their sorted members (a bitmap's bytes depend on how it was
 * built). Two builds with the same lines hold the same rows.
 */
export async function printBuildHashes(runner: QueryRunner, project: string, version: string | number): Promise<void> {
  const read = { timeoutS: 600 }
  const columns = await runner.rows<{ table: string; names: string[]; types: string[] }>(
    {
      name: 'columns',
      sql: `SELECT table, groupArray(name) AS names, groupArray(type) AS types FROM (SELECT table, name, type FROM system.columns
          WHERE database = currentDatabase() AND table LIKE 'sealed\\_%' AND table NOT IN ('sealed_builds', 'sealed_visitors') AND table NOT LIKE 'sealed\\_live%'
            AND name NOT IN ('project_id', 'version') ORDER BY table, position) GROUP BY table ORDER BY table`,
      params: {},
    },
    read,
  )
  console.log(`\n| table | rows | hash |\n|---|--:|---|`)
  for (const { table, names, types } of columns) {
    const cols = names.map((n, i) => (types[i]!.startsWith('AggregateFunction(groupBitmap') ? `arraySort(bitmapToArray(${n}))` : n))
    const [h] = await runner.rows<{ rows: number; hash: string }>(
      {
        name: 'hash',
        sql: `SELECT count() AS rows, hex(sum(cityHash64(${cols.join(', ')}))) AS hash FROM ${table} WHERE project_id = {p:String} AND version = {v:UInt64}`,
        params: { p: project, v: version },
      },
      read,
    )
    console.log(`| ${table} | ${h!.rows} | ${h!.hash} |`)
  }
}
