/**
 * The insert counts a planner checks a build with, for several projects in one statement
 * (sql/queries/event_inserts_since.sql), against a model computed in TypeScript from the rows
 * event_inserts logged; and the batching that puts the counts asked at once into one statement.
 */
import { DateTime } from 'luxon'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { emptyStats, type QueryRunner } from '../src/clickhouse/run.ts'
import type { InsertCount, InsertQuery } from '../src/query/event-inserts.ts'
import { BatchedReads } from '../src/services/batched-reads.ts'
import { readInsertCounts } from '../src/services/planning-reads.ts'
import { openTestRuntime, type TestRuntime } from './helpers/runtime.ts'

let rt: TestRuntime
const read = { timeoutS: 30 }
/** event_inserts as logged: each insert's project, earliest event and time of logging. */
let logged: { project_id: string; earliest: string; logged_at: string }[]

const instant = (s: string) => DateTime.fromSQL(s, { zone: 'utc' })
const text = (t: DateTime) => t.toUTC().toFormat('yyyy-MM-dd HH:mm:ss.SSS')

beforeAll(async () => {
  rt = await openTestRuntime()
  // Four inserts, apart in time: each logs a row per project it holds, with its earliest event.
  const inserts: [string, string][][] = [
    [['pa', '2026-03-01 10:00:00'], ['pa', '2026-03-05 12:00:00'], ['pb', '2026-03-02 08:00:00']],
    [['pa', '2026-03-09 09:30:00']],
    [['pb', '2026-02-20 00:00:00'], ['pc', '2026-03-10 00:00:00']],
    [['pa', '2026-02-27 23:59:59']],
  ]
  for (const rows of inserts) {
    const values = rows.map(([p, t]) => `('${p}', 'e', 'd', '${t}')`).join(', ')
    await rt.runner.command({ name: 'insert', sql: `INSERT INTO events (project_id, name, device_id, created_at) VALUES ${values}`, params: {} })
    await new Promise((r) => setTimeout(r, 20))
  }
  logged = await rt.runner.rows({ name: 'logged', sql: 'SELECT project_id, toString(earliest) AS earliest, toString(logged_at) AS logged_at FROM event_inserts ORDER BY logged_at', params: {} }, read)
})
afterAll(async () => rt?.dispose())

/** The count the statement must give an entry, from the logged rows. */
function model(q: InsertQuery): InsertCount {
  const since = text(q.since)
  const closed = text(q.closedAt)
  const verified = q.verified ?? since
  const rows = logged.filter((r) => r.project_id === q.projectId && r.logged_at >= since)
  const after = rows.filter((r) => r.logged_at > verified).map((r) => r.earliest).sort()
  return {
    inserts: rows.length,
    closed_inserts: rows.filter((r) => r.earliest < closed).length,
    last_logged: rows.map((r) => r.logged_at).sort().at(-1) ?? '1970-01-01 00:00:00.000',
    verified_inserts: rows.filter((r) => r.logged_at <= verified).length,
    unverified_from: after[0] !== undefined && after[0] > closed ? after[0] : closed,
  }
}

const normal = (c: InsertCount) => ({ ...c, last_logged: text(instant(c.last_logged)), unverified_from: text(instant(c.unverified_from)) })

describe('event_inserts_since for several entries', () => {
  it('gives each entry the count of its own project since its own point, with its own C and verified insert', async () => {
    expect(logged.map((r) => r.project_id).sort()).toEqual(['pa', 'pa', 'pa', 'pb', 'pb', 'pc'])
    const first = instant(logged[0]!.logged_at)
    const entries: InsertQuery[] = [
      { projectId: 'pa', closedAt: instant('2026-03-06 00:00:00'), since: first.minus({ hours: 1 }) },
      // The same project with another C, counted from after its first insert, one insert verified.
      { projectId: 'pa', closedAt: instant('2026-03-01 00:00:00'), since: first.plus({ milliseconds: 1 }), verified: logged.find((r, i) => i > 0 && r.project_id === 'pa')!.logged_at },
      { projectId: 'pb', closedAt: instant('2026-03-03 00:00:00'), since: first.minus({ hours: 1 }), verified: logged[0]!.logged_at },
      { projectId: 'pc', closedAt: instant('2026-03-01 00:00:00'), since: first.minus({ hours: 1 }) },
      { projectId: 'none', closedAt: instant('2026-03-01 00:00:00'), since: first.minus({ hours: 1 }) },
    ]
    const counts = await readInsertCounts(rt.runner, entries, read)
    expect(counts.map(normal)).toEqual(entries.map(model))
    // The entries differ: a statement that mixed them up would not pass.
    expect(new Set(entries.map((e) => JSON.stringify(model(e)))).size).toBe(entries.length)
  })
})

describe('BatchedReads', () => {
  const counting = () => {
    const statements: number[] = []
    const runner: QueryRunner = {
      ...rt.runner,
      rows: (stmt, opts) => {
        statements.push((stmt.params.inserts_projects as string[]).length)
        return rt.runner.rows(stmt, opts)
      },
    }
    return { runner, statements }
  }
  const query = (projectId: string): InsertQuery => ({ projectId, closedAt: instant('2026-03-04 00:00:00'), since: instant('2026-01-01 00:00:00') })

  it('reads the counts asked at once in one statement, each its own', async () => {
    const { runner, statements } = counting()
    const batched = new BatchedReads<InsertQuery, InsertCount>(readInsertCounts)
    const projects = ['pa', 'pb', 'pc', 'none', 'pa-2']
    const all = await Promise.all(projects.map((p) => batched.load(p, query(p.replace('-2', '')), runner, read)))
    expect(statements).toEqual([projects.length])
    expect(all.map(normal)).toEqual(projects.map((p) => model(query(p.replace('-2', '')))))
  })

  it('gathers the counts asked while a read runs into the next statement, and counts them as waited', async () => {
    const { runner, statements } = counting()
    const batched = new BatchedReads<InsertQuery, InsertCount>(readInsertCounts)
    const own = emptyStats()
    const first = batched.load('pa', query('pa'), runner, { ...read, stats: own })
    await new Promise((r) => setImmediate(r))
    const later = ['pb', 'pc', 'none'].map((p) => ({ p, stats: emptyStats() }))
    const rest = later.map(({ p, stats }) => batched.load(p, query(p), runner, { ...read, stats }))
    const counts = await Promise.all([first, ...rest])
    expect(statements).toEqual([1, 3])
    expect(counts.map(normal)).toEqual(['pa', 'pb', 'pc', 'none'].map((p) => model(query(p))))
    expect(own.waited).toBe(0)
    expect(later.map((l) => l.stats.waited)).toEqual([0, 1, 1])
  })

  it('fails every request of a batch whose statement fails, and reads the next batch', async () => {
    let calls = 0
    const batched = new BatchedReads<string, number>(async (_runner, args) => {
      calls++
      if (calls === 1) throw new Error('engine down')
      return args.map((a) => a.length)
    })
    const failed = Promise.allSettled(['a', 'bb'].map((k) => batched.load(k, k, rt.runner, read)))
    await new Promise((r) => setImmediate(r))
    const later = batched.load('ccc', 'ccc', rt.runner, read)
    expect((await failed).map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(await later).toBe(3)
  })
})
