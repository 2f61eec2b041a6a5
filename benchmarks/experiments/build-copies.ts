/**
 * What an incremental build would pay to carry a build's rows forward, and a build step's INSERT
 * before and after a change of its table, on a project's newest build (benchmarks/README.md,
 * "Incremental sealing: what a new hour would cost…").
 *
 *   npx tsx benchmarks/experiments/build-copies.ts copy DIR PROJECT
 *     each large sealed table's rows of the build copied under a new version into an empty copy of
 *     the table, one part per insert as the builder writes them: CPU and wall per table
 *   npx tsx benchmarks/experiments/build-copies.ts step DIR PROJECT RUNS TABLE OLD.sql NEW.sql [DROPPED,…]
 *     a build statement's INSERT, old text and new, into scratch copies of TABLE (the new one
 *     without the DROPPED columns), interleaved: CPU and wall medians, rows and size on disk
 */
import { Session } from 'chdb'
import { readFileSync } from 'node:fs'
import { attributeFragments } from '../../src/query/sealed-live.ts'
import { renderSqlText } from '../../src/query/sql-templates.ts'
import { quantile } from '../lib/stats.ts'

const [mode, dir, project, ...rest] = process.argv.slice(2)
if (!dir || !project || (mode !== 'copy' && mode !== 'step')) throw new Error('usage: build-copies.ts copy|step DIR PROJECT …')
const s = new Session(dir)
s.query('USE quarry')
const cpu = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
const ONE_PART = 'max_insert_threads = 1, min_insert_block_size_rows = 0, min_insert_block_size_bytes = 2147483648'
const [build] = JSON.parse(
  s.queryBind('SELECT toString(version) AS version, toString(closed_at) AS closed FROM sealed_builds WHERE project_id = {p:String} ORDER BY version DESC LIMIT 1', { p: project }, 'JSON'),
).data as { version: string; closed: string }[]
if (!build) throw new Error(`${project} has no sealed build in ${dir}`)
const timed = (sql: string, params: object) => {
  const c0 = cpu()
  const t0 = performance.now()
  s.queryBind(sql, params)
  return { wall: performance.now() - t0, cpu: cpu() - c0 }
}
const fresh = (table: string) => {
  s.query('DROP TABLE IF EXISTS scratch_copy')
  s.query(`CREATE TABLE scratch_copy AS ${table}`)
}

if (mode === 'copy') {
  for (const table of ['sealed_sessions', 'sealed_page_views', 'sealed_person_events', 'sealed_session_events', 'sealed_rollups', 'sealed_page_days', 'sealed_device_profiles']) {
    fresh(table)
    // `src.version`: the REPLACE's alias would otherwise shadow the column in WHERE.
    const t = timed(
      `INSERT INTO scratch_copy SELECT * REPLACE (toUInt64(1) AS version) FROM ${table} AS src
       WHERE src.project_id = {p:String} AND src.version = {v:UInt64} SETTINGS ${ONE_PART}`,
      { p: project, v: build.version },
    )
    const rows = s.query('SELECT count() FROM scratch_copy', 'TSV').trim()
    console.log(`${table}: ${rows} rows, ${t.cpu.toFixed(0)} ms of CPU, ${t.wall.toFixed(0)} ms`)
  }
} else {
  const [runs, table, oldFile, newFile, dropped = ''] = rest
  if (!runs || !table || !oldFile || !newFile) throw new Error('usage: build-copies.ts step DIR PROJECT RUNS TABLE OLD.sql NEW.sql [DROPPED,…]')
  // The statements' partials and fragments as the builder renders them; the build's own parameters.
  const render = (file: string) => renderSqlText(readFileSync(file, 'utf8'), attributeFragments).replace(`INSERT INTO ${table}`, 'INSERT INTO scratch_copy')
  const files = [oldFile, newFile]
  const sqls = files.map(render)
  // The build's own version: the page steps read its earlier tables (the scratch copy is apart).
  const params = { project, version: build.version, closed: build.closed }
  const costs = files.map(() => [] as { wall: number; cpu: number }[])
  for (let r = 0; r < Number(runs); r++) {
    files.forEach((file, k) => {
      fresh(table)
      if (k === 1) for (const column of dropped.split(',').filter(Boolean)) s.query(`ALTER TABLE scratch_copy DROP COLUMN ${column}`)
      costs[k]!.push(timed(`${sqls[k]}\nSETTINGS max_execution_time = 900, ${ONE_PART}`, params))
      if (r === 0) {
        const size = s.query("SELECT formatReadableSize(sum(bytes_on_disk)) FROM system.parts WHERE database = 'quarry' AND table = 'scratch_copy' AND active", 'TSV').trim()
        console.log(`${file}: ${s.query('SELECT count() FROM scratch_copy', 'TSV').trim()} rows, ${size}`)
      }
    })
  }
  const median = (xs: number[]) => quantile(xs, 0.5).toFixed(0)
  files.forEach((file, k) => {
    const cpus = costs[k]!.map((c) => c.cpu)
    console.log(`${file}: median ${median(costs[k]!.map((c) => c.wall))} ms, CPU ${median(cpus)} ms (runs ${cpus.map((c) => c.toFixed(0)).join(', ')})`)
  })
}
s.query('DROP TABLE IF EXISTS scratch_copy')
