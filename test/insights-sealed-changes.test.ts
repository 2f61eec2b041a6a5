/**
 * The sealed history under event filters and for /pages, and its answers while the data changes
 * under a build (an insert before C, a sealed session that gets an event after C, a re-import, read
 * without the build until the next), the insert count, the live sessions, exact visitors: through
 * real requests against the reference model over the inserted rows (test/fixtures/sealed-seams.ts).
 */
import { describe, expect, it } from 'vitest'
import { eventId } from './fixtures/insights-data.ts'
import { createClientRow } from '../src/auth/clients.ts'
import type { QueryRunner, Statement } from '../src/clickhouse/run.ts'
import { createResponseCache, type ResponseCache } from '../src/http/cache/middleware.ts'
import { eventsWatermark } from '../src/http/cache/watermark.ts'
import { createMetrics, type Metrics } from '../src/telemetry/metrics.ts'
import { SealedHistory } from '../src/services/sealed/index.ts'
import { C, cases, events, extra, get, h, inline, insert, model, S, seal, U, useSealedSeams } from './fixtures/sealed-seams.ts'
import { queryString, requestAs, type Query, type Reply } from './fixtures/insights-harness.ts'
import { testApp } from './helpers/runtime.ts'
import { ms, type EventRow, type Filter, type Window } from './fixtures/insights-model.ts'

useSealedSeams()

let importedId = 750_000

describe('event filters on the sealed history', () => {
  const query = { startDate: '2026-03-02T10:00:00Z', endDate: '2026-04-14T22:00:00Z' }
  // A request that only explains itself plans with what earlier requests checked: one runs first.
  const explained = async (filters: Filter[]) => {
    expect((await get(U, 'country', { ...query, filters })).sealedUntil).toBe(C)
    return (await h.get(U, 'country', { ...query, filters, explain: 'sql' })).body.sql.at(-1) as string
  }

  it("read the build's postings for the sealed sessions, and the events only from the held sessions' start on", async () => {
    const sql = await explained([{ name: 'path', operator: 'contains', value: ['/'] }])
    expect(sql).toContain('FROM sealed_event_postings')
    const scans = [...sql.matchAll(/FROM events WHERE .*? AND created_at >= (.*?) AND/g)].map((m) => m[1])
    expect(scans.length).toBeGreaterThan(0)
    for (const from of scans) expect(from).toMatch(/^greatest\(.*\{held_from:/)
  })

  it("rest on the build's session numbers: 1 to n over the sessions before C, a UTC day's a run after the day before's", async () => {
    const sessions = new Set(events.filter((e) => e.project_id === U && e.session_id !== '' && ms(e) < C).map((e) => e.session_id))
    // The table keeps each session's key, the hash of its id: the ids are found from the ones expected.
    const rows = await h.rt.runner.rows<{ id: string; sno: number; created_at: string }>(
      {
        name: 'numbers',
        sql: `SELECT ids.id AS id, sno, toString(created_at) AS created_at FROM sealed_sessions AS s
          LEFT JOIN (SELECT arrayJoin({ids:Array(String)}) AS id) AS ids ON s.session_key = reinterpretAsUInt128(sipHash128(ids.id))
          WHERE project_id = {p:String} AND version = (SELECT max(version) FROM sealed_builds WHERE project_id = {p:String}) ORDER BY sno`,
        params: { p: U, ids: [...sessions] },
      },
      { timeoutS: 10 },
    )
    expect(rows.length).toBe(sessions.size)
    expect(new Set(rows.map((r) => r.id))).toEqual(sessions)
    expect(rows.map((r) => r.sno)).toEqual(rows.map((_, i) => i + 1))
    const days = rows.map((r) => r.created_at.slice(0, 10))
    expect(days).toEqual([...days].sort())
  })

  it('test a small postings set as a list of its sessions, a large one with its bitmap, after one read of their sizes', async () => {
    // The rarest event name among the sessions before C, and a path every session has.
    const before = events.filter((e) => e.project_id === U && e.session_id !== '' && ms(e) < C && ms(e) >= Date.parse(query.startDate.slice(0, 10)))
    const sessionsOf = (keep: (e: EventRow) => boolean) => new Set(before.filter(keep).map((e) => e.session_id)).size
    const names = [...new Set(before.map((e) => e.name))].map((name) => ({ name, sessions: sessionsOf((e) => e.name === name) }))
    const rare = names.sort((a, b) => a.sessions - b.sessions)[0]!
    expect(rare.sessions * 12).toBeLessThan(sessionsOf(() => true))
    const small: Filter[] = [{ name: 'name', operator: 'is', value: [rare.name] }]
    const large: Filter[] = [{ name: 'path', operator: 'contains', value: ['/'] }]
    expect((await get(U, 'country', query)).sealedUntil).toBe(C)
    const [IN, BITMAP] = ['AND sno IN (', 'AND bitmapContains((']
    // An ISO endDate is the window's last instant.
    const window: Window = { start: Date.parse(query.startDate), end: Date.parse(query.endDate) + 1, timezone: 'UTC' }
    for (const [filters, form] of [[small, IN], [large, BITMAP]] as const) {
      // A window from a day no request has asked: its sets' sizes are not known yet.
      const unknown = (await h.get(U, 'country', { ...query, startDate: '2026-03-03T10:00:00Z', filters, explain: 'sql' })).body.sql as string[]
      expect(unknown.some((sql) => sql.includes('sealed_postings_sizes'))).toBe(true)
      const res = await get(U, 'country', { ...query, filters, limit: 1000 })
      expect(res.sealedUntil).toBe(C)
      expect(res.body).toEqual(model().breakdown(U, 'country', window, filters))
      const known = (await h.get(U, 'country', { ...query, filters, explain: 'sql' })).body.sql as string[]
      expect(known.some((sql) => sql.includes('sealed_postings_sizes'))).toBe(false)
      expect(known.at(-1)).toContain(form)
      expect(known.at(-1)).not.toContain(form === IN ? BITMAP : IN)
    }
  })

  it('scan the events from the window\'s start where the postings hold no such column', async () => {
    const sql = await explained([{ name: 'properties.plan', operator: 'isNotNull', value: [] }])
    expect(sql).not.toContain('sealed_event_postings')
    expect(sql).toMatch(/FROM events WHERE .*? AND created_at >= \{earliest:/)
  })
})

describe('/pages from the sealed history', () => {
  // Every window is answered from it (whole days, zones' midnights and instants), and a filtered one
  // when each filter is on a view's own origin, path or name or on a session attribute.
  const SESSION_NAMES = ['country', 'browser']
  const onViews = (filters: Filter[]) => filters.every((f) => ['path', 'origin', 'name'].includes(f.name) || SESSION_NAMES.includes(f.name))
  for (const c of cases(31, 16)) {
    it(c.label, async () => {
      const expected = model().pages(c.project, c.w, c.filters)
      const query = { ...(c.query as object), limit: 1000 }
      const res = await get(c.project, 'pages', query)
      expect(res.sealedUntil).toBe(onViews(c.filters) ? C : null)
      expect(res.body).toEqual(expected)
      const computed = await inline(c.project, 'pages', query)
      expect(computed.body).toEqual(expected)
    })
  }
})

describe('when the data changes under a build', () => {
  const W30: Window = { start: Date.parse('2026-03-15T00:00:00Z'), end: Date.parse('2026-04-15T00:00:00Z'), timezone: 'UTC' }
  const check = async (sealed: boolean) => {
    for (const dimension of ['country', 'exit_page', 'entry_page']) {
      const res = await get(U, dimension, { range: '30d', limit: 1000 })
      expect(res.sealedUntil !== null, dimension).toBe(sealed)
      expect(res.body, dimension).toEqual(model().breakdown(U, dimension, W30))
      const computed = await inline(U, dimension, { range: '30d', limit: 1000 })
      expect(computed.headers.get('x-quarry-sealed-until') !== null, dimension).toBe(sealed)
      expect(computed.body, dimension).toEqual(res.body)
    }
    const pages = await get(U, 'pages', { range: '30d', limit: 1000 })
    expect(pages.sealedUntil !== null, 'pages').toBe(sealed)
    expect(pages.body, 'pages').toEqual(model().pages(U, W30))
    expect((await inline(U, 'pages', { range: '30d', limit: 1000 })).body, 'pages').toEqual(pages.body)
    const m = await get(U, 'metrics', { range: '30d' })
    expect(m.sealedUntil !== null).toBe(sealed)
    expect(m.body).toEqual(model().metrics(U, W30, 'day'))
  }

  /** Rows that the build cannot answer: the sessions answer until the next build, which answers again. */
  const unsealedUntilTheNextBuild = async (rows: EventRow[]) => {
    await insert(rows)
    await check(false)
    await seal()
    await check(true)
  }

  it('a late insert before C: answered from sessions until the next build, then sealed again', async () => {
    await unsealedUntilTheNextBuild([extra('sx-late', 'sx-p5', '2026-04-13T09:00:00Z', { country: 'FI' })])
  })

  it('an event after C for a session sealed whole: answered from sessions until the next build', async () => {
    await unsealedUntilTheNextBuild([extra('sx-r1', 'sx-p3', '2026-04-14T21:45:00Z', { path: '/sx/z' })])
  })

  it('a new session after C keeps the build: it is read live', async () => {
    await insert([extra('sx-live', 'sx-p6', '2026-04-14T22:20:00Z', { country: 'IS' })])
    await check(true)
  })

  it('an event after C for a session sealed whole, earlier than one verified before it: found all the same', async () => {
    // The check after an insert reads the events of the inserts logged since the last verified one,
    // from the earliest of them: here before the live event verified by the test above.
    await unsealedUntilTheNextBuild([extra('sx-pay', 'sx-p7', '2026-04-14T21:10:00Z', { country: 'SE' })])
  })

  it('an import of older events: answered from sessions, then sealed again', async () => {
    // A session imported again under another id, as an import of an older export would.
    const again = events.filter((e) => e.project_id === U && e.session_id === 'sx-cross' && ms(e) < C)
    expect(again.length).toBeGreaterThan(1)
    await unsealedUntilTheNextBuild(again.map((e) => ({ ...e, id: eventId(++importedId), session_id: 'sx-cross-imported' })))
  })
})

describe('the insert count', () => {
  const queries = (res: Reply) => Number(/queries=(\d+)/.exec(res.headers.get('x-quarry-stats') ?? '')?.[1])
  it('is read once per insertsTtlMs: a request within it plans without the read, one after it reads again', async () => {
    // The clock stands still but for the steps below, so a slow machine cannot carry a request
    // past the TTL between them.
    let now = 0
    const realNow = Date.now
    const start = realNow()
    Date.now = () => start + now
    try {
      const sealed = new SealedHistory({ runner: h.rt.runner, logger: h.rt.logger, now: () => h.clock.now, queryTimeoutS: 10, rebuildIntervalMs: 0, insertsTtlMs: 1_000 })
      const app = testApp(h.rt, { now: () => h.clock.now, sealed })
      const root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'root-ttl' })
      const ask = () => requestAs(app, `http://quarry.test/insights/${U}/country?range=30d`, root)
      const first = await ask()
      expect(first.headers.get('x-quarry-sealed-until')).not.toBeNull()
      now += 500
      const within = await ask()
      expect(within.headers.get('x-quarry-sealed-until')).not.toBeNull()
      // The newest build (trusted 5 s), the insert count and the verified live sessions are known: only the statement runs.
      expect(queries(within)).toBe(1)
      now += 600
      const after = await ask()
      expect(queries(after)).toBe(2)
      expect(after.body).toEqual(within.body)
    } finally {
      Date.now = realNow
    }
  })
})

/** A runner that keeps each statement it reads with, and how many of them bear a name. */
function recording(): { runner: QueryRunner; read: Statement[]; count: (name: string) => number } {
  const read: Statement[] = []
  const runner: QueryRunner = {
    ...h.rt.runner,
    rows: (stmt, opts) => {
      read.push(stmt)
      return h.rt.runner.rows(stmt, opts)
    },
  }
  return { runner, read, count: (name) => read.filter((s) => s.name === name).length }
}

describe('a burst after an insert', () => {
  it('shares the planning reads: one newest build, one insert count, one crossing check for 12 concurrent requests, all exact', async () => {
    const sealed = new SealedHistory({ runner: h.rt.runner, logger: h.rt.logger, now: () => h.clock.now, queryTimeoutS: 10, rebuildIntervalMs: 0 })
    const { runner, read, count } = recording()
    const app = testApp(h.rt, { now: () => h.clock.now, sealed, runner })
    const root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'root-burst' })
    const c = cases(41, 12).find((x) => x.project === U && x.filters.length === 0)!
    const ask = () => requestAs(app, `http://quarry.test/insights/${U}/country?${queryString({ ...(c.query as object), limit: 1000 })}`, root)
    expect((await ask()).status).toBe(200)
    await sealed.snapshotsWritten(U)
    // Past the least time between two snapshots of a part, so that the burst writes one.
    await new Promise((r) => setTimeout(r, 2_100))
    // A new session after C: the build holds, and the events after it are checked again.
    await insert([extra('bx-new', 'bx-p1', '2026-04-14T22:25:00Z', { country: 'FI' })])
    read.length = 0
    const burst = await Promise.all(Array.from({ length: 12 }, ask))
    await sealed.snapshotsWritten(U)
    const expected = model().breakdown(U, 'country', c.w, c.filters)
    for (const res of burst) {
      expect(res.status).toBe(200)
      expect(res.headers.get('x-quarry-sealed-until')).not.toBeNull()
      expect(res.body, c.label).toEqual(expected)
    }
    expect(count('sealed_latest')).toBeLessThanOrEqual(1)
    expect(count('sealed_crossing')).toBe(1)
    // One for the plan, one after the live sessions' write. The visitors seen (047) are not written
    // for a project with fewer recent sessions than countedMinSessions: this one has a handful.
    expect(count('event_inserts_since')).toBe(2)
    expect(count('insights_breakdown_sealed:country')).toBe(12)
  })

  it('reads the sizes of a filter\'s postings sets once for 8 concurrent requests, all exact', async () => {
    const sealed = new SealedHistory({ runner: h.rt.runner, logger: h.rt.logger, now: () => h.clock.now, queryTimeoutS: 10, rebuildIntervalMs: 0 })
    const { runner, count } = recording()
    const app = testApp(h.rt, { now: () => h.clock.now, sealed, runner })
    const root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'root-sizes' })
    const query = { startDate: '2026-03-04T10:00:00Z', endDate: '2026-04-14T22:00:00Z' }
    const filters: Filter[] = [{ name: 'name', operator: 'is', value: ['click'] }]
    const ask = (q: Query) => requestAs(app, `http://quarry.test/insights/${U}/country?${queryString({ ...(q as object), limit: 1000 })}`, root)
    expect((await ask(query)).headers.get('x-quarry-sealed-until')).not.toBeNull()
    const burst = await Promise.all(Array.from({ length: 8 }, () => ask({ ...query, filters })))
    const expected = model().breakdown(U, 'country', { start: Date.parse(query.startDate), end: Date.parse(query.endDate) + 1, timezone: 'UTC' }, filters)
    for (const res of burst) {
      expect(res.headers.get('x-quarry-sealed-until')).not.toBeNull()
      expect(res.body).toEqual(expected)
    }
    expect(count('sealed_postings_sizes')).toBe(1)
  })

  it('lists its planning reads under explain=sql with parameters that run beside the route statement\'s, in the one map', async () => {
    // A dry run plans as the planner last saw the data: a request first, on a build.
    await seal()
    const query = { startDate: '2026-03-02T10:00:00Z', endDate: '2026-04-14T22:00:00Z' }
    expect((await get(U, 'country', query)).sealedUntil).toBe(C)
    const body = (await h.get(U, 'country', { ...query, explain: 'sql' })).body as { sql: string[]; params: Record<string, unknown> }
    expect(body.sql.some((sql) => sql.includes('FROM event_inserts'))).toBe(true)
    expect(body.sql.some((sql) => sql.includes('FROM sealed_rollups'))).toBe(true)
    for (const query of body.sql) {
      const result = await h.rt.engine.client.exec({ query, query_params: body.params })
      for await (const _ of result.stream) {
        // drained: the statement ran with the map's values
      }
    }
  })

  it('plans two projects asked at once with one read of their newest builds, their insert counts batched too', async () => {
    const sealed = new SealedHistory({ runner: h.rt.runner, logger: h.rt.logger, now: () => h.clock.now, queryTimeoutS: 10, rebuildIntervalMs: 0 })
    const { runner, read } = recording()
    const named = (name: string, list: string) => read.filter((s) => s.name === name).map((s) => (s.params[list] as string[]).length)
    const builds = await Promise.all([U, S].map((p) => sealed.forRequest(p, { runner })))
    const newest = await h.rt.runner.rows<{ project_id: string; version: number }>(
      { name: 'newest', sql: 'SELECT project_id, max(version) AS version FROM sealed_builds WHERE project_id IN ({u:String}, {s:String}) GROUP BY project_id', params: { u: U, s: S } },
      { timeoutS: 10 },
    )
    expect(builds.map((b) => b?.version)).toEqual([U, S].map((p) => Number(newest.find((r) => r.project_id === p)!.version)))
    expect(named('sealed_latest', 'latest_projects')).toEqual([2])
    expect(named('event_inserts_since', 'inserts_projects').reduce((a, b) => a + b, 0)).toBe(2)
  })
})

/**
 * A runner that records the snapshot each /pages statement read (undefined: it computed the part
 * after C), and counts /pages' snapshot writes, each of which waits for `delay(n)` first.
 */
function pagesWrites(delay: (write: number) => Promise<unknown>) {
  const seen = { writes: 0, stamps: [] as unknown[] }
  const runner: QueryRunner = {
    ...h.rt.runner,
    rows: (stmt, opts) => {
      if (stmt.name === 'insights_pages_sealed') seen.stamps.push(stmt.params.pages_stamp)
      return h.rt.runner.rows(stmt, opts)
    },
    command: async (stmt, opts) => {
      if (stmt.name === 'sealed_live_pages_write') await delay(++seen.writes)
      return h.rt.runner.command(stmt, opts)
    },
  }
  return { runner, seen }
}

/**
 * The second /pages request, asked while the write it would read is held: answered within 400 ms
 * unless it `waits`; then the write released, its answer `expected`, read from the snapshot if it waited.
 */
async function askWhileHeld(ask: () => Promise<Reply>, release: () => void, sealed: SealedHistory, waits: boolean, expected: unknown, stamps: unknown[]) {
  let answered = false
  const second = ask().then((res) => ((answered = true), res))
  await new Promise((r) => setTimeout(r, 400))
  expect(answered).toBe(!waits)
  release()
  const res = await second
  await sealed.snapshotsWritten(U)
  expect(res.status).toBe(200)
  expect(res.body).toEqual(expected)
  expect(stamps).toHaveLength(2)
  if (waits) expect(stamps[1]).toBeGreaterThan(0)
  else expect(stamps[1]).toBeUndefined()
}

describe("a request while its part's snapshot write is under way", () => {
  // The write is held until released, so that the second request surely finds it under way.
  for (const waitMs of [5_000, 100]) {
    const waits = waitMs > 1_000
    it(`${waits ? 'waits for it and reads it' : 'past the wait, computes its part itself'}: the same answer as the model, the write run once`, async () => {
      const sealed = new SealedHistory({ runner: h.rt.runner, logger: h.rt.logger, now: () => h.clock.now, queryTimeoutS: 10, rebuildIntervalMs: 0, snapshotWaitMs: waitMs })
      let release!: () => void
      const held = new Promise<void>((r) => (release = r))
      const { runner, seen } = pagesWrites(() => held)
      const { stamps } = seen
      const app = testApp(h.rt, { now: () => h.clock.now, sealed, runner })
      const root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: `root-wait-${waitMs}` })
      const c = cases(41, 12).find((x) => x.project === U && x.filters.length === 0)!
      const ask = () => requestAs(app, `http://quarry.test/insights/${U}/pages?${queryString({ ...(c.query as object), limit: 1000 })}`, root)
      const expected = model().pages(U, c.w, c.filters)
      // The first request starts the write and computes its part without waiting for it.
      const first = await ask()
      expect(first.status).toBe(200)
      expect(first.headers.get('x-quarry-sealed-until')).not.toBeNull()
      expect(first.body).toEqual(expected)
      expect(stamps).toEqual([undefined])
      await askWhileHeld(ask, release, sealed, waits, expected, stamps)
      expect(seen.writes).toBe(1)
      // Written now: the next reads it.
      expect((await ask()).body).toEqual(expected)
      expect(stamps[2]).toBeGreaterThan(0)
      expect(seen.writes).toBe(1)
    })
  }
})

describe('the request that starts a snapshot write', () => {
  // The first write of /pages' part is slowed to 400 ms; the second held until released.
  for (const longWriteMs of [300, Infinity]) {
    const waits = longWriteMs < Infinity
    it(`${waits ? "waits for it when the part's last write took snapshotLongWriteMs or more" : 'computes its part while it runs when the last write was shorter'}: the same answer as the model`, async () => {
      const sealed = new SealedHistory({ runner: h.rt.runner, logger: h.rt.logger, now: () => h.clock.now, queryTimeoutS: 10, rebuildIntervalMs: 0, snapshotWaitMs: 5_000, snapshotLongWriteMs: longWriteMs, insertsTtlMs: 0 })
      let release!: () => void
      const held = new Promise<void>((r) => (release = r))
      const { runner, seen } = pagesWrites((n) => (n === 1 ? new Promise((r) => setTimeout(r, 400)) : held))
      const { stamps } = seen
      const app = testApp(h.rt, { now: () => h.clock.now, sealed, runner })
      const root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: `root-starter-${longWriteMs}` })
      const c = cases(43, 12).find((x) => x.project === U && x.filters.length === 0)!
      const ask = () => requestAs(app, `http://quarry.test/insights/${U}/pages?${queryString({ ...(c.query as object), limit: 1000 })}`, root)
      // No write timed yet: the first request computes its part while the first write runs.
      const first = await ask()
      expect(first.body).toEqual(model().pages(U, c.w, c.filters))
      expect(stamps).toEqual([undefined])
      await sealed.snapshotsWritten(U)
      // An event after C, and the least time between two writes of a part: the next request starts the next write.
      await insert([extra(`lw-${waits ? 'wait' : 'compute'}`, 'lw-p1', '2026-04-14T22:26:00Z', { country: 'PT' })])
      await new Promise((r) => setTimeout(r, 2_100))
      await askWhileHeld(ask, release, sealed, waits, model().pages(U, c.w, c.filters), stamps)
      expect(seen.writes).toBe(2)
    })
  }
})

describe('the live sessions', () => {
  it('are written once the build is verified and read from there; explained, the statement shows the stamp it reads', async () => {
    await get(U, 'country', { range: '30d' })
    await h.sealed!.snapshotsWritten(U)
    const explained = await h.get(U, 'country', { range: '30d', explain: 'sql' })
    expect(explained.status, JSON.stringify(explained.body)).toBe(200)
    expect(explained.body.params.stamp).toBeGreaterThan(0)
    expect(explained.body.sql.at(-1)).toContain('FROM sealed_live')
    const [row] = await (
      await h.rt.engine.client.query({
        query: 'SELECT count() AS n FROM sealed_live WHERE project_id = {p:String} AND stamp = {s:UInt64}',
        query_params: { p: U, s: explained.body.params.stamp },
        format: 'JSONEachRow',
      })
    ).json<{ n: number }>()
    const live = new Set(events.filter((e) => e.project_id === U && ms(e) >= C && e.session_id !== '').map((e) => e.session_id))
    expect(Number(row!.n)).toBe(live.size)
  })

  it('are written a part at a time, by the first request that reads it: a breakdown writes neither the events, /pages\' part nor the profiles', async () => {
    const sealed = new SealedHistory({ runner: h.rt.runner, logger: h.rt.logger, now: () => h.clock.now, queryTimeoutS: 10, rebuildIntervalMs: 0 })
    // The live sessions' stamp each country statement read (undefined: it computed them itself).
    const stamps: unknown[] = []
    const runner: QueryRunner = {
      ...h.rt.runner,
      rows: (stmt, opts) => {
        if (stmt.name === 'insights_breakdown_sealed:country') stamps.push(stmt.params.stamp)
        return h.rt.runner.rows(stmt, opts)
      },
    }
    const app = testApp(h.rt, { now: () => h.clock.now, sealed, runner })
    const root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'root-parts' })
    const explain = (route: string, query: Query) => requestAs(app, `http://quarry.test/insights/${U}/${route}?${queryString(query)}`, root)
    // A request does not wait for the write it starts: the next one reads it once it is written.
    const ask = async (route: string, query: Query) => {
      const res = await explain(route, query)
      await sealed.snapshotsWritten(U)
      return res
    }
    /** Which snapshot tables the request's statement reads, as explain=sql lists it. */
    const reads = async (route: string, query: Record<string, string>) => {
      const explained = await explain(route, { ...query, explain: 'sql' })
      expect(explained.status, JSON.stringify(explained.body)).toBe(200)
      const sql = (explained.body.sql as string[]).join('\n')
      return ['sealed_live_events', 'sealed_live_pages', 'sealed_live_profiles', 'sealed_live'].filter((table) => new RegExp(`FROM ${table}\\b`).test(sql))
    }
    const routes = { country: { range: '30d' }, metrics: { range: '30d' }, pages: { range: '30d' }, engagement: {} as Record<string, string> }
    const stamp = async () => (await explain('country', { ...routes.country, explain: 'sql' })).body.params.stamp as number
    const before = await explain('country', routes.country)
    expect(before.status).toBe(200)
    // Answered without waiting for the write it started: it computed the live sessions itself.
    expect(stamps).toEqual([undefined])
    await sealed.snapshotsWritten(U)
    expect(await reads('country', routes.country)).toEqual(['sealed_live'])
    const written = await stamp()
    // /metrics' revenue after C comes from the events' part, which the breakdown did not write.
    expect(await reads('metrics', routes.metrics)).toEqual(['sealed_live'])
    expect((await ask('metrics', routes.metrics)).status).toBe(200)
    expect(await reads('metrics', routes.metrics)).toEqual(['sealed_live_events', 'sealed_live'])
    expect(await reads('pages', routes.pages)).toEqual([])
    expect(await reads('engagement', routes.engagement)).toEqual([])
    expect((await ask('pages', routes.pages)).status).toBe(200)
    expect(await reads('pages', routes.pages)).toEqual(['sealed_live_pages'])
    expect(await reads('engagement', routes.engagement)).toEqual([])
    expect((await ask('engagement', routes.engagement)).status).toBe(200)
    expect(await reads('engagement', routes.engagement)).toEqual(['sealed_live_profiles'])
    // The live sessions were written once: the breakdown reads them under the same stamp.
    const again = await ask('country', routes.country)
    expect(again.body).toEqual(before.body)
    expect(await stamp()).toBe(written)
  })

  it('computed by each request, give the same answers as written', async () => {
    for (const c of cases(29, 4)) {
      const query = { ...(c.query as object), limit: 1000 }
      const computed = await inline(c.project, 'city', query)
      expect(computed.headers.get('x-quarry-sealed-until')).not.toBeNull()
      expect(computed.body, c.label).toEqual(model().breakdown(c.project, 'city', c.w, c.filters))
      expect(computed.body, c.label).toEqual((await get(c.project, 'city', query)).body)
    }
  })
})

describe('visitors are exact', () => {
  it('equal uniqExact over the raw events for the sealed window', async () => {
    const res = await get(U, 'metrics', { range: '3m' })
    expect(res.sealedUntil).toBe(C)
    const [row] = await (
      await h.rt.engine.client.query({
        query: `SELECT uniqExact(visitor) AS n FROM (
            SELECT min(created_at) AS started, tupleElement(min((created_at, profile_id)), 2) AS visitor
            FROM events WHERE project_id = {p:String} AND session_id != '' GROUP BY session_id)
          WHERE started >= {from:DateTime64(3, 'UTC')} AND started < {to:DateTime64(3, 'UTC')}`,
        query_params: { p: U, from: '2026-01-14 00:00:00.000', to: '2026-04-15 00:00:00.000' },
        format: 'JSONEachRow',
      })
    ).json<{ n: number }>()
    expect(res.body.metrics.unique_visitors).toBeGreaterThan(0)
    expect(res.body.metrics.unique_visitors).toBe(Number(row!.n))
  })

  it("equal uniqExact over the raw events for each page's viewers, in a window through C", async () => {
    const res = await get(U, 'pages', { startDate: '2026-02-03T05:30:00Z', endDate: '2026-04-14T22:00:00Z', limit: 1000 })
    expect(res.sealedUntil).toBe(C)
    const rows = await (
      await h.rt.engine.client.query({
        query: `SELECT origin, path, uniqExact(profile_id) AS n FROM events
          WHERE project_id = {p:String} AND name = 'screen_view' AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
          GROUP BY origin, path`,
        query_params: { p: U, from: '2026-02-03 05:30:00.000', to: '2026-04-14 22:00:00.001' },
        format: 'JSONEachRow',
      })
    ).json<{ origin: string; path: string; n: number }>()
    const exact = new Map(rows.map((r) => [`${r.origin} ${r.path}`, Number(r.n)]))
    expect(res.body.length).toBe(exact.size)
    for (const page of res.body as { origin: string; path: string; visitors: number }[]) expect(page.visitors, page.path).toBe(exact.get(`${page.origin} ${page.path}`))
  })
})

describe('a request behind the newest inserts (liveLagMs)', () => {
  const W30: Window = { start: Date.parse('2026-03-15T00:00:00Z'), end: Date.parse('2026-04-15T00:00:00Z'), timezone: 'UTC' }
  const ROUTES: Record<string, { query: Query; expected: () => unknown }> = {
    country: { query: { range: '30d', limit: 1000 }, expected: () => model().breakdown(U, 'country', W30) },
    pages: { query: { range: '30d', limit: 1000 }, expected: () => model().pages(U, W30) },
    metrics: { query: { range: '30d' }, expected: () => model().metrics(U, W30, 'day') },
  }
  /** An app over its own sealed history that may read the events after C as they were up to `liveLagMs` ago. */
  const lagging = async (liveLagMs: number, name: string, responseCache?: ResponseCache, metrics?: Metrics) => {
    const sealed = new SealedHistory({ runner: h.rt.runner, logger: h.rt.logger, now: () => h.clock.now, queryTimeoutS: 10, rebuildIntervalMs: 0, insertsTtlMs: 0, countedMinSessions: 0, liveLagMs, metrics })
    const app = testApp(h.rt, { now: () => h.clock.now, sealed, ...(responseCache ? { responseCache } : {}) })
    const root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name })
    const ask = async (route: string) => {
      const res = await requestAs(app, `http://quarry.test/insights/${U}/${route}?${queryString(ROUTES[route]!.query)}`, root)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.headers.get('x-quarry-sealed-until'), route).not.toBeNull()
      return res
    }
    // Every route's parts written for the data as it is, and read back from there.
    for (const route of Object.keys(ROUTES)) await ask(route)
    await sealed.snapshotsWritten(U)
    return { sealed, ask }
  }
  /** A new session after C: it keeps the build and changes every route's answer. */
  const insertLive = async (session: string) => {
    const before = Object.fromEntries(Object.entries(ROUTES).map(([route, r]) => [route, r.expected()]))
    await insert([extra(session, `${session}-p`, '2026-04-14T22:24:00Z', { country: 'EE', path: `/${session}` })])
    for (const [route, r] of Object.entries(ROUTES)) expect(r.expected(), route).not.toEqual(before[route])
    // The least time between two writes of a part, so that the next request starts the next state's.
    await new Promise((r) => setTimeout(r, 2_100))
    return before
  }

  it("within the lag, reads the snapshots of the state before the insert, says since when, then the new state's once written", async () => {
    const metrics = createMetrics()
    const reads = async () => Object.fromEntries((await metrics.sealedLiveReads.get()).values.map((v) => [v.labels.read, v.value]))
    const { sealed, ask } = await lagging(60_000, 'root-lag', undefined, metrics)
    // The first of each route found nothing written and computed its part.
    expect(await reads()).toEqual({ computed: 3 })
    let lastAsked = 0
    for (const route of Object.keys(ROUTES)) {
      lastAsked = Date.now()
      const res = await ask(route)
      expect(res.headers.get('x-quarry-live-as-of'), route).toBeNull()
      expect(res.body, route).toEqual(ROUTES[route]!.expected())
    }
    const verified = Date.now()
    const before = await insertLive('lag-a')
    for (const route of Object.keys(ROUTES)) {
      const res = await ask(route)
      // As of the last read that still found the count before the insert: that of the last request before it.
      const asOf = Date.parse(res.headers.get('x-quarry-live-as-of') ?? '')
      expect(asOf, route).toBeGreaterThanOrEqual(lastAsked)
      expect(asOf, route).toBeLessThanOrEqual(verified)
      expect(res.body, route).toEqual(before[route])
    }
    await sealed.snapshotsWritten(U)
    for (const route of Object.keys(ROUTES)) {
      const res = await ask(route)
      expect(res.headers.get('x-quarry-live-as-of'), route).toBeNull()
      expect(res.body, route).toEqual(ROUTES[route]!.expected())
    }
    expect(await reads()).toEqual({ computed: 3, current: 6, earlier: 3 })
  })

  it('past the lag, answers for the data as it is', async () => {
    const { ask } = await lagging(1_000, 'root-lag-short')
    await insertLive('lag-b')
    for (const route of Object.keys(ROUTES)) {
      const res = await ask(route)
      expect(res.headers.get('x-quarry-live-as-of'), route).toBeNull()
      expect(res.body, route).toEqual(ROUTES[route]!.expected())
    }
  })

  it('is neither kept by the response cache nor tagged: the next request after the write reads the new state', async () => {
    const cache = createResponseCache({ now: () => h.clock.now, watermark: eventsWatermark(h.rt.runner) }, { watermarkTtlMs: 0 })
    const { sealed, ask } = await lagging(60_000, 'root-lag-cached', cache)
    const before = await insertLive('lag-c')
    const behind = await ask('country')
    expect(behind.headers.get('x-quarry-live-as-of')).not.toBeNull()
    expect(behind.body).toEqual(before.country)
    expect(behind.headers.get('x-quarry-cache')).toBe('bypass')
    expect(behind.headers.get('etag')).toBeNull()
    await sealed.snapshotsWritten(U)
    const current = await ask('country')
    expect(current.headers.get('x-quarry-live-as-of')).toBeNull()
    expect(current.body).toEqual(ROUTES.country!.expected())
    expect(current.headers.get('x-quarry-cache')).toBe('miss')
    expect((await ask('country')).headers.get('x-quarry-cache')).toBe('hit')
  })
})
