/**
 * One route's statement taken apart, for the experiments in benchmarks/README.md that time a
 * statement's parts or variants of it:
 *
 *   npx tsx benchmarks/experiments/statements.ts dump DIR PROJECT ROUTE QUERY OUT
 *     the last statement the route runs (OUT.sql) and its parameters (OUT.json), as `explain=sql`
 *     shows them, once a first request's snapshots of what it reads are written; ROUTE is a dimension
 *     or route under /insights/PROJECT, or a path from /
 *   npx tsx benchmarks/experiments/statements.ts ab DIR PARAMS.json RUNS A.sql B.sql …
 *     SQL files run with those parameters, interleaved (A, B, A, B, …; the first round not counted):
 *     median and least wall ms, median CPU ms of the process (chDB runs in it), and a hash and the
 *     length of each file's rows, so that variants can be checked to return the same rows; a file
 *     whose first line is `-- settings: name = value, …` runs with those settings
 *   npx tsx benchmarks/experiments/statements.ts sql DIR "SQL" …
 *     SQL as it is, tables in database `quarry` (no other process may have DIR open)
 */
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { Session } from 'chdb'
import pino from 'pino'
import { loadConfig } from '../../src/config.ts'
import { openRuntime } from '../../src/runtime.ts'
import { sealedProjectApp } from '../lib/sealed-project.ts'
import { quantile } from '../lib/stats.ts'

const [mode, dir, ...args] = process.argv.slice(2)
if (!dir) throw new Error('usage: statements.ts dump|ab|sql DIR …')

if (mode === 'dump') {
  const [project, route, query, out] = args
  if (!project || !route || query === undefined || !out) throw new Error('usage: statements.ts dump DIR PROJECT ROUTE QUERY OUT')
  const { rt, app, headers, sealed } = await sealedProjectApp(dir, project, 'statements')
  const url = (extra: string) => `http://q.bench${route.startsWith('/') ? route : `/insights/${project}/${route}`}?${query}${extra}`
  await (await app.request(url(''), { headers })).text()
  await sealed.snapshotsWritten(project)
  const res = await app.request(url('&explain=sql'), { headers })
  const body = (await res.json()) as { sql: string[]; params: Record<string, unknown> }
  writeFileSync(`${out}.sql`, body.sql.at(-1)!.replace(/SETTINGS[\s\S]*$/, ''))
  writeFileSync(`${out}.json`, JSON.stringify(body.params))
  await rt.close()
} else if (mode === 'ab') {
  const [paramsFile, runs, ...files] = args
  if (!paramsFile || !runs || files.length === 0) throw new Error('usage: statements.ts ab DIR PARAMS.json RUNS A.sql B.sql …')
  const params = JSON.parse(readFileSync(paramsFile, 'utf8')) as Record<string, unknown>
  const rt = await openRuntime(loadConfig({ ...process.env, QUARRY_DATA_DIR: dir, QUARRY_SEALED: '0' }), pino({ level: 'warn' }))
  const sqls = files.map((f) => readFileSync(f, 'utf8'))
  const walls = files.map(() => [] as number[])
  const cpus = files.map(() => [] as number[])
  const rowsOf: string[] = []
  for (let round = 0; round <= Number(runs); round++) {
    for (const [k, sql] of sqls.entries()) {
      const cpu0 = process.cpuUsage()
      const t0 = performance.now()
      const rows = await rt.runner.rows({ name: 'variant', sql, params, settings: settingsOf(sql) }, { timeoutS: 120 })
      const wall = performance.now() - t0
      const cpu = process.cpuUsage(cpu0)
      if (round > 0) {
        walls[k]!.push(wall)
        cpus[k]!.push((cpu.user + cpu.system) / 1000)
      } else {
        const sorted = rows.map((row) => JSON.stringify(row)).sort()
        rowsOf[k] = `${createHash('md5').update(JSON.stringify(sorted)).digest('hex').slice(0, 10)} ${JSON.stringify(rows).length}`
      }
    }
  }
  const median = (xs: number[]) => quantile(xs, 0.5)
  files.forEach((f, k) =>
    console.log(f, 'median', Math.round(median(walls[k]!)), 'min', Math.round(Math.min(...walls[k]!)), 'cpu', Math.round(median(cpus[k]!)), '|', rowsOf[k]),
  )
  await rt.close()
} else if (mode === 'sql') {
  const session = new Session(dir)
  for (const sql of args) console.log(session.query(sql, 'PrettyCompactMonoBlock'))
  session.cleanup()
} else {
  throw new Error('usage: statements.ts dump|ab|sql DIR …')
}

/** The settings a variant file names on its first line (`-- settings: max_threads = 1, …`). */
function settingsOf(sql: string): Record<string, string | number> {
  const line = /^-- settings: (.*)$/m.exec(sql.split('\n')[0] ?? '')?.[1]
  if (!line) return {}
  return Object.fromEntries(line.split(',').map((kv) => {
    const [k, v] = kv.split('=').map((x) => x.trim())
    return [k!, Number.isNaN(Number(v)) ? v! : Number(v)]
  }))
}
