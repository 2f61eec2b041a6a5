// Seeds a project into the data directory given as first argument and prints, as one JSON line,
// a row count and a checksum over every column of every table the seed writes, and the levels
// and rows of the sessions parts it wrote. It runs as a
// process of its own because chDB serves one data directory per process.
import { seedProject } from '../../src/seed/seed.ts'
import { openRuntime } from '../../src/runtime.ts'
import { createLogger } from '../../src/log.ts'
import { testConfig } from './runtime.ts'

const [dir, request] = process.argv.slice(2)
if (!dir || !request) throw new Error('usage: seed-checksum.ts <data dir> <seed request JSON>')
const req = JSON.parse(request) as { projectId: string; events: number; days: number; seed: number; end: string }

const rt = await openRuntime(testConfig({ QUARRY_DATA_DIR: dir }), createLogger('silent'))
try {
  await seedProject(rt.runner, { ...req, end: new Date(req.end) })
  // Read before anything else runs, and a merge could rewrite the parts: their levels and rows as written.
  const [parts] = await rt.runner.rows<{ levels: number[]; rows: number }>(
    {
      name: 'sessions_parts',
      sql: `SELECT groupUniqArray(level) AS levels, sum(rows) AS rows
            FROM system.parts WHERE database = currentDatabase() AND table = 'sessions' AND active`,
      params: {},
    },
    { timeoutS: 60 },
  )
  const sums: Record<string, { rows: number; sum: string }> = {}
  // RowBinary keeps NULLs and map entries in the hashed bytes (cityHash64 of a NULL is NULL).
  for (const table of ['events', 'sessions FINAL', 'profiles FINAL', 'event_meta FINAL', 'groups FINAL']) {
    const [row] = await rt.runner.rows<{ rows: number; sum: string }>(
      {
        name: 'checksum',
        sql: `SELECT count() AS rows, toString(sum(cityHash64(formatRow('RowBinary', *)))) AS sum FROM ${table}`,
        params: {},
      },
      { timeoutS: 60 },
    )
    sums[table] = row!
  }
  process.stdout.write(`${JSON.stringify({ sums, sessionsParts: parts })}\n`)
} finally {
  await rt.close()
}
