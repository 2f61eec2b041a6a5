/**
 * Reads side by side on the embedded engine (src/clickhouse/engine/read-lanes.ts): a project's route
 * statements, as its requests send them once their snapshots are written, run `CONCURRENCY` at a
 * time (the query gate's default) through each variant, interleaved round by round:
 *
 *   line        every read on chDB's one line for parameterized statements (QUARRY_READ_LANES=0)
 *   lanes:K     the line and K lanes beside it, each lane's values in a file read by one subquery
 *   subqueries  one session, no parameters, each placeholder a subquery of its own over a Memory
 *               table (as the background lane reads its values): why the lanes read a file once
 *   NAME@T      a variant with max_threads = T on each statement
 *
 * Prints reads a second, the median read's wall ms and the process's CPU per wall second, and checks
 * that every variant returns each statement's rows (sorted) as the line does.
 *
 *   npx tsx benchmarks/experiments/read-lanes.ts DIR PROJECT [ROUNDS] [CONCURRENCY] [ROUTES] [VARIANTS]
 *   (ROUTES default country,metrics,pages,referrer,city; VARIANTS default line,lanes:1,lanes:2,subqueries)
 */
import { createHash } from 'node:crypto'
import { loadavg } from 'node:os'
import { Session } from 'chdb'
import { openReadLanes, type ReadLanes } from '../../src/clickhouse/engine/read-lanes.ts'
import { PLACEHOLDER, quoted } from '../../src/clickhouse/sql-text.ts'
import { sealedProjectApp } from '../lib/sealed-project.ts'
import { quantile } from '../lib/stats.ts'

const [dir, project, roundsArg = '5', concurrencyArg = '4', routesArg = 'country,metrics,pages,referrer,city', variantsArg = 'line,lanes:1,lanes:2,subqueries'] = process.argv.slice(2)
if (!dir || !project) throw new Error('usage: read-lanes.ts DIR PROJECT [ROUNDS] [CONCURRENCY] [ROUTES] [VARIANTS]')
const rounds = Number(roundsArg)
const concurrency = Number(concurrencyArg)
const READS_PER_ROUTE = 20

const { rt, app, headers, sealed } = await sealedProjectApp(dir, project, 'read-lanes')
const statements: { route: string; sql: string; params: Record<string, unknown> }[] = []
for (const route of routesArg.split(',')) {
  const url = `http://q.bench/insights/${project}/${route}?range=30d`
  await (await app.request(url, { headers })).text()
  await sealed.snapshotsWritten(project)
  const body = (await (await app.request(`${url}&explain=sql`, { headers })).json()) as { sql: string[]; params: Record<string, unknown> }
  statements.push({ route, sql: body.sql.at(-1)!, params: body.params })
}

/** The background lane's way, kept here only to be measured: a subquery per placeholder. */
function subqueryReads(): ReadLanes & { session: Session } {
  const session = new Session(dir!)
  session.query(`USE ${rt.config.CLICKHOUSE_DATABASE}`)
  session.query('CREATE TABLE IF NOT EXISTS read_lanes_values (job UInt64, name String, value String) ENGINE = Memory')
  let job = 0
  const text = (v: unknown): string => (Array.isArray(v) ? `[${v.map((x) => quoted(String(x))).join(',')}]` : String(v))
  let tail: Promise<unknown> = Promise.resolve()
  return {
    session,
    read(req) {
      const run = async () => {
        const n = ++job
        const rows = Object.entries(req.params).map(([name, value]) => JSON.stringify({ job: n, name, value: text(value) }))
        await session.insert({ table: 'read_lanes_values', values: Buffer.from(`${rows.join('\n')}\n`), format: 'JSONEachRow' })
        const sql = req.sql.replace(PLACEHOLDER, (_, name: string, type: string) => `CAST((SELECT value FROM read_lanes_values WHERE job = ${n} AND name = '${name}'), ${quoted(type)})`)
        return (await session.queryAsync(sql)).text()
      }
      const done = tail.then(run)
      tail = done.catch(() => {})
      return done.then((text) => ({ text, on: 'lane' as const }))
    },
    async close() {
      await tail
      session.query('DROP TABLE IF EXISTS read_lanes_values')
      session.close()
    },
  }
}

const variants = new Map<string, ReadLanes>()
for (const key of variantsArg.split(',')) {
  const name = key.split('@')[0]!
  if (name === 'line') variants.set(key, openReadLanes(dir, rt.config.CLICKHOUSE_DATABASE, 0))
  else if (name.startsWith('lanes:')) variants.set(key, openReadLanes(dir, rt.config.CLICKHOUSE_DATABASE, Number(name.slice(6))))
  else if (name === 'subqueries') variants.set(key, subqueryReads())
  else throw new Error(`unknown variant ${name}`)
}

const rowsHash = (text: string) => createHash('sha256').update(text.split('\n').filter(Boolean).sort().join('\n')).digest('hex').slice(0, 12)
const expected = new Map<string, string>()
const results = new Map<string, { perSecond: number[]; medians: number[]; cpu: number[] }>()
const work = statements.flatMap((s) => Array.from({ length: READS_PER_ROUTE }, () => s))

for (let round = 0; round <= rounds; round++) {
  for (const [key, pool] of variants) {
    const [name, threadsText] = key.split('@')
    const threads = threadsText ? Number(threadsText) : undefined
    const latencies: number[] = []
    let next = 0
    const cpu0 = process.cpuUsage()
    const started = performance.now()
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < work.length; i = next++) {
          const s = work[i]!
          const t = performance.now()
          const sql = threads ? s.sql.replace(/\nSETTINGS /, `\nSETTINGS max_threads = ${threads}, `) : s.sql
          const { text } = await pool.read({ sql, params: s.params, queryId: `read-lanes-${i}` })
          latencies.push(performance.now() - t)
          const hash = rowsHash(text)
          if (!expected.has(s.route)) expected.set(s.route, hash)
          else if (expected.get(s.route) !== hash) throw new Error(`${name}: ${s.route} returned other rows than the first variant`)
        }
      }),
    )
    const wall = performance.now() - started
    const cpu = process.cpuUsage(cpu0)
    // The first round warms each variant's sessions: not counted.
    if (round === 0) continue
    const r = results.get(key) ?? { perSecond: [], medians: [], cpu: [] }
    r.perSecond.push((work.length / wall) * 1000)
    r.medians.push(quantile(latencies, 0.5))
    r.cpu.push((cpu.user + cpu.system) / 1000 / wall)
    results.set(key, r)
  }
}

const med = (xs: number[]) => quantile(xs, 0.5).toFixed(1)
console.log(`${project}, routes ${routesArg}, ${work.length} reads a round, ${concurrency} at a time, ${rounds} rounds; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`)
console.log('| variant | reads/s (median) | rounds | read ms p50 | CPU s per s |')
console.log('|---|--:|---|--:|--:|')
for (const [name, r] of results) console.log(`| ${name} | ${med(r.perSecond)} | ${r.perSecond.map((x) => x.toFixed(1)).join(', ')} | ${med(r.medians)} | ${med(r.cpu)} |`)
for (const pool of variants.values()) await pool.close()
await rt.close()
