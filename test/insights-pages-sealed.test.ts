/**
 * /pages answered from the sealed history's page tables (src/query/sealed-pages.ts): the same rows
 * as the reference model, through real requests, for windows of every kind (whole UTC days, a
 * zone's midnights with whole-hour and half-hour offsets, unaligned ISO instants, windows that end
 * before C or start after it); and the answer stays right when the data changes under the build (an
 * insert before C, a late event tying a session to the build), read from the events until the
 * history is sealed again.
 *
 * The fixture is the Insights one, plus sessions made for the build's seams: one that spans C with
 * its last view before it, one that spans C with a view after it, a session that views a page on
 * two days before C, a visitor who returns after C, sessions without views, and the page of empty
 * origin and path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventMaker, PROJECTS } from './fixtures/insights-data.ts'
import { createClientRow } from '../src/auth/clients.ts'
import type { CommandOptions, Statement } from '../src/clickhouse/run.ts'
import { SealedHistory } from '../src/services/sealed/index.ts'
import { openInsights, queryString, requestAs, type Harness, type Query, type Reply } from './fixtures/insights-harness.ts'
import { Dataset, ms, windowOf, type EventRow, type Filter, type Window } from './fixtures/insights-model.ts'
import { testApp } from './helpers/runtime.ts'

const U = PROJECTS.utc.id
const S = PROJECTS.sthlm.id
/** C at the pinned clock (22:37 UTC on 14 April): the last start of an hour over an hour old. */
const C_UTC = Date.parse('2026-04-14T21:00:00Z')
const C_STHLM = C_UTC

let h: Harness
/** The same data through an app whose sealed history computes what comes after C in each statement instead of writing it once per state. */
let inline: (project: string, query: Query) => Promise<Reply>
let events: EventRow[]
/** A view (unless `fields` say otherwise) of project U, on the attributes of the fixture's first event there. */
const extra = eventMaker(500_000, { origin: 'https://example.com', path: '/rx/a', properties: { __title: 'Rollup A' } })

const SEAMS: EventRow[] = [
  // Spans C, its last event before C a view: held out, whole.
  extra('rx-cross', 'rx-p1', '2026-04-14T20:50:00Z'),
  extra('rx-cross', 'rx-p1', '2026-04-14T21:05:00Z', { path: '/rx/b', properties: { __title: 'Rollup B' } }),
  // Spans C with a click last before it and a view after it: held out too.
  extra('rx-cross2', 'rx-p4', '2026-04-14T20:40:00Z', { path: '/rx/b' }),
  extra('rx-cross2', 'rx-p4', '2026-04-14T20:55:00Z', { name: 'click', path: '', origin: '', properties: {} }),
  extra('rx-cross2', 'rx-p4', '2026-04-14T21:10:00Z'),
  // One page on two days before C in one session.
  extra('rx-days', 'rx-p2', '2026-04-10T23:59:00Z'),
  extra('rx-days', 'rx-p2', '2026-04-11T00:01:00Z'),
  extra('rx-days', 'rx-p2', '2026-04-11T00:03:30Z', { name: 'click', path: '', origin: '', properties: {} }),
  // A visitor before C and again after it, in two sessions.
  extra('rx-r1', 'rx-p3', '2026-04-12T10:00:00Z'),
  extra('rx-r2', 'rx-p3', '2026-04-14T21:30:00Z'),
  // A visitor who viewed a page on C's day before C and again after it, in two sessions.
  extra('rx-t1', 'rx-p9', '2026-04-14T12:00:00Z'),
  extra('rx-t2', 'rx-p9', '2026-04-14T21:50:00Z'),
  // One whose views before C are over a month before it: windows that long merge the bitmaps.
  extra('rx-o1', 'rx-p8', '2026-03-01T10:00:00Z'),
  extra('rx-o2', 'rx-p8', '2026-04-14T21:40:00Z'),
  // Sessions without views, before C and after it, and one that enters on the page with empty
  // origin and path and does not bounce: counted as entries, the others would make it bounce.
  extra('rx-noview', 'rx-p5', '2026-04-12T11:00:00Z', { name: 'click', path: '', origin: '', properties: {} }),
  extra('rx-noview2', 'rx-p5', '2026-04-14T21:20:00Z', { name: 'click', path: '', origin: '', properties: {} }),
  extra('rx-empty', 'rx-p6', '2026-04-12T12:00:00Z', { path: '', origin: '', properties: {} }),
  extra('rx-empty', 'rx-p6', '2026-04-12T12:00:30Z', { path: '/rx/b' }),
]

async function insert(rows: EventRow[]): Promise<void> {
  await h.rt.engine.client.insert({ table: 'events', values: rows, format: 'JSONEachRow' })
  events.push(...rows)
}

const model = () => new Dataset(events)

beforeAll(async () => {
  h = await openInsights({ sealed: true })
  events = [...h.data.events]
  await insert(SEAMS)
  await h.sealed!.build(U)
  await h.sealed!.build(S)
  const sealed = new SealedHistory({ runner: h.rt.runner, logger: h.rt.logger, now: () => h.clock.now, queryTimeoutS: 10, rebuildIntervalMs: 0, liveSnapshots: false, insertsTtlMs: 0 })
  const app = testApp(h.rt, { now: () => h.clock.now, sealed })
  const root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'root-inline' })
  inline = (project, query) => requestAs(app, `http://quarry.test/insights/${project}/pages?${queryString({ ...(query as object), limit: 1000 })}`, root)
})
afterAll(async () => {
  await h?.dispose()
})

/** /pages with every row, and whether the sealed history answered (the instant of its C, or null). */
async function pages(project: string, query: Query = {}) {
  const res = await h.get(project, 'pages', { ...(query as object), limit: 1000 })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  const sealed = res.headers.get('x-quarry-sealed-until')
  return { body: res.body, closedAt: sealed === null ? null : Date.parse(sealed) }
}

const UTC_30D = windowOf('2026-03-15T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC')

describe('the fixture reaches every seam of a build', () => {
  it('has sessions across C, a session on two days before C, returning visitors and pages on both sides', () => {
    const views = events.filter((e) => e.project_id === U && e.name === 'screen_view')
    const sessions = new Map<string, EventRow[]>()
    for (const e of events.filter((e) => e.project_id === U)) sessions.set(e.session_id, [...(sessions.get(e.session_id) ?? []), e])
    const across = [...sessions.values()].filter((list) => list.some((e) => ms(e) < C_UTC) && list.some((e) => ms(e) >= C_UTC))
    expect(across.length).toBeGreaterThanOrEqual(2)
    const day = (e: EventRow) => e.created_at.slice(0, 10)
    const pageDays = new Map<string, Set<string>>()
    for (const v of views.filter((v) => ms(v) < C_UTC)) {
      const key = `${v.session_id} ${v.path}`
      pageDays.set(key, (pageDays.get(key) ?? new Set()).add(day(v)))
    }
    expect([...pageDays.values()].some((days) => days.size > 1)).toBe(true)
    const before = new Set(views.filter((v) => ms(v) >= UTC_30D.start && ms(v) < C_UTC).map((v) => `${v.profile_id} ${v.path}`))
    expect(views.filter((v) => ms(v) >= C_UTC && before.has(`${v.profile_id} ${v.path}`)).length).toBeGreaterThan(0)
  })
})

/** Windows of every kind: whole UTC days, a zone's midnights, ISO instants, before C and after it. */
const WINDOWS: [string, string, Query, Window, number][] = [
  ['UTC 30d', U, { range: '30d' }, UTC_30D, C_UTC],
  ['UTC 7d', U, { range: '7d' }, windowOf('2026-04-07T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC'), C_UTC],
  ['UTC 3m', U, { range: '3m' }, windowOf('2026-01-14T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC'), C_UTC],
  ['UTC month to date', U, { range: 'monthToDate' }, windowOf('2026-04-01T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC'), C_UTC],
  ['UTC today, C inside it', U, { range: 'today' }, windowOf('2026-04-14T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC'), C_UTC],
  ['UTC from the day rx-p3 last viewed /rx/a before returning after C', U, { startDate: '2026-04-12', endDate: '2026-04-14' }, windowOf('2026-04-12T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC'), C_UTC],
  ['UTC from the day of the session on two days', U, { startDate: '2026-04-11', endDate: '2026-04-14' }, windowOf('2026-04-11T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC'), C_UTC],
  ['Stockholm 30d, over DST', S, { range: '30d' }, windowOf('2026-03-16T00:00:00+01:00', '2026-04-16T00:00:00+02:00', 'Europe/Stockholm'), C_STHLM],
  ['a UTC project read in Stockholm: midnights an hour off UTC days', U, { range: '30d', timezone: 'Europe/Stockholm' }, windowOf('2026-03-16T00:00:00+01:00', '2026-04-16T00:00:00+02:00', 'Europe/Stockholm'), C_UTC],
  ['a UTC project read in Asia/Kolkata (+05:30)', U, { range: '7d', timezone: 'Asia/Kolkata' }, windowOf('2026-04-08T00:00:00+05:30', '2026-04-16T00:00:00+05:30', 'Asia/Kolkata'), C_UTC],
  ['a UTC project read in New York, month to date', U, { range: 'monthToDate', timezone: 'America/New_York' }, windowOf('2026-04-01T00:00:00-04:00', '2026-04-15T00:00:00-04:00', 'America/New_York'), C_UTC],
  ['a window that ends before C', U, { range: 'yesterday' }, windowOf('2026-04-13T00:00:00Z', '2026-04-14T00:00:00Z', 'UTC'), C_UTC],
  ['a window that ends on the day the session on two days began', U, { startDate: '2026-04-01', endDate: '2026-04-10' }, windowOf('2026-04-01T00:00:00Z', '2026-04-11T00:00:00Z', 'UTC'), C_UTC],
  ['a window that starts between midnights', U, { range: 'last24h' }, windowOf('2026-04-13T22:37:00Z', '2026-04-14T22:38:00Z', 'UTC'), C_UTC],
  ['unaligned ISO instants that end before C', U, { startDate: '2026-04-09T08:10:00Z', endDate: '2026-04-13T14:01:40Z' }, windowOf('2026-04-09T08:10:00Z', '2026-04-13T14:01:40.001Z', 'UTC'), C_UTC],
  ['unaligned ISO instants through the view that crosses midnight', U, { startDate: '2026-04-10T23:59:30Z', endDate: '2026-04-11T00:02:00Z' }, windowOf('2026-04-10T23:59:30Z', '2026-04-11T00:02:00.001Z', 'UTC'), C_UTC],
  ['ISO instants to after C from the hour before the session on two days viewed /rx/a again', U, { startDate: '2026-04-10T23:00:00Z', endDate: '2026-04-14T23:00:00Z' }, windowOf('2026-04-10T23:00:00Z', '2026-04-14T23:00:00.001Z', 'UTC'), C_UTC],
  ['ISO instants to after C from before rx-p3 viewed /rx/a on the day before returning after C', U, { startDate: '2026-04-12T09:00:00Z', endDate: '2026-04-14T23:00:00Z' }, windowOf('2026-04-12T09:00:00Z', '2026-04-14T23:00:00.001Z', 'UTC'), C_UTC],
  ['ISO instants to after C from after rx-p3 viewed /rx/a on that day', U, { startDate: '2026-04-12T10:30:00Z', endDate: '2026-04-14T23:00:00Z' }, windowOf('2026-04-12T10:30:00Z', '2026-04-14T23:00:00.001Z', 'UTC'), C_UTC],
  ['a window that starts after C', U, { startDate: '2026-04-14T21:15:00Z', endDate: '2026-04-14T23:00:00Z' }, windowOf('2026-04-14T21:15:00Z', '2026-04-14T23:00:00.001Z', 'UTC'), C_UTC],
  ['a window that ends inside C\'s own hour before C', U, { startDate: '2026-04-14T00:00:00Z', endDate: '2026-04-14T20:59:59Z' }, windowOf('2026-04-14T00:00:00Z', '2026-04-14T20:59:59.001Z', 'UTC'), C_UTC],
]

describe('answers from the sealed history', () => {
  for (const [label, project, query, w, closedAt] of WINDOWS) {
    it(label, async () => {
      const expected = model().pages(project, w)
      const res = await pages(project, query)
      expect(res.closedAt).toBe(closedAt)
      expect(res.body).toEqual(expected)
      const computed = await inline(project, query)
      expect(computed.headers.get('x-quarry-sealed-until')).not.toBeNull()
      expect(computed.body).toEqual(expected)
    })
  }

  it('pages through the same ranking', async () => {
    const all = model().pages(U, UTC_30D)
    const seen: unknown[] = []
    let url: string | null = `http://quarry.test/insights/${U}/pages?range=30d&limit=4`
    while (url) {
      const res: Reply = await h.fetch(url)
      expect(res.headers.get('x-quarry-sealed-until')).not.toBeNull()
      seen.push(...res.body)
      url = res.headers.get('link')?.match(/^<([^>]+)>/)?.[1] ?? null
    }
    expect(seen).toEqual(all)
  })

  it('explains its planning reads and the statement it answers with, which run as shown gives the same rows', async () => {
    await pages(U, { range: '30d' })
    const res = await h.get(U, 'pages', { range: '30d', limit: 1000, explain: 'sql' })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.headers.get('x-quarry-sealed-until')).not.toBeNull()
    // The planning read that checks no insert reached before C is listed before the answer.
    const sql = res.body.sql as string[]
    expect(sql.length).toBeGreaterThanOrEqual(2)
    expect(sql.slice(0, -1).some((s) => s.includes('FROM event_inserts'))).toBe(true)
    const answer = sql.at(-1)!
    expect(answer).toContain('sealed_page_days')
    // rx-cross and rx-cross2 span C: the held-out sessions are among the parameters shown.
    expect(res.body.params.held_out.length).toBeGreaterThanOrEqual(2)
    const result = await h.rt.engine.client.exec({ query: answer, query_params: res.body.params })
    let text = ''
    for await (const chunk of result.stream) text += chunk.toString()
    const rows = text.split('\n').filter(Boolean).map((line) => JSON.parse(line))
    expect(rows).toEqual(model().pages(U, UTC_30D))
  })

  it('explaining a request for a project without a build lists the read that finds none and starts no build', async () => {
    const builds = async () =>
      (await (await h.rt.engine.client.query({ query: `SELECT count() AS n FROM sealed_builds WHERE project_id = {p:String}`, query_params: { p: PROJECTS.empty.id }, format: 'JSONEachRow' })).json<{ n: number }>())[0]!.n
    const res = await h.get(PROJECTS.empty.id, 'pages', { range: '30d', explain: 'sql' })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect((res.body.sql as string[]).some((s) => s.includes('FROM sealed_builds'))).toBe(true)
    await h.sealed!.settled(PROJECTS.empty.id)
    expect(await builds()).toBe(0)
  })

  it('counts bounces over sessions with views only, on both paths', async () => {
    const empty = (rows: { origin: string; path: string }[]) => rows.find((r) => r.origin === '' && r.path === '')
    const fromSealed = await pages(U, { range: '30d' })
    // The same data through an app without the sealed history: it reads the events.
    const client = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'pages-plain' })
    const plain = testApp(h.rt, { now: () => h.clock.now })
    const fromEvents = await requestAs(plain, `http://quarry.test/insights/${U}/pages?${queryString({ range: '30d', limit: 1000 })}`, client)
    expect(fromSealed.closedAt).toBe(C_UTC)
    expect(fromEvents.headers.get('x-quarry-sealed-until')).toBeNull()
    expect(empty(fromSealed.body)).toEqual(empty(model().pages(U, UTC_30D)))
    expect(empty(fromSealed.body)).toMatchObject({ pageviews: 1, bounce_rate: 0 })
    expect(empty(fromEvents.body)).toEqual(empty(fromSealed.body))
  })
})

describe('reads the events where the page tables do not answer', () => {
  it("filters on the view's own path or origin: answered from the sealed history", async () => {
    const filters = [{ name: 'path', operator: 'startsWith', value: ['/rx'] }]
    const res = await pages(U, { range: '30d', filters })
    expect(res.closedAt).toBe(C_UTC)
    expect(res.body).toEqual(model().pages(U, UTC_30D, filters))
  })

  it('filters on session attributes, with one on the path: answered from the sealed history', async () => {
    const filters = [{ name: 'country', operator: 'is', value: ['SE'] }, { name: 'path', operator: 'startsWith', value: ['/'] }]
    const res = await pages(U, { range: '30d', filters })
    expect(res.closedAt).toBe(C_UTC)
    expect(res.body).toEqual(model().pages(U, UTC_30D, filters))
  })

  it("filters on the event's name (a view's is screen_view): answered from the sealed history", async () => {
    const FILTERS = [
      [{ name: 'name', operator: 'is', value: ['revenue'] }],
      [{ name: 'name', operator: 'is', value: ['screen_view'] }],
      [{ name: 'name', operator: 'isNot', value: ['screen_view'] }, { name: 'country', operator: 'is', value: ['SE'] }],
      [{ name: 'name', operator: 'contains', value: ['view'] }, { name: 'country', operator: 'is', value: ['SE'] }],
    ]
    for (const filters of FILTERS) {
      const expected = model().pages(U, UTC_30D, filters)
      const res = await pages(U, { range: '30d', filters })
      expect(res.closedAt).toBe(C_UTC)
      expect(res.body).toEqual(expected)
    }
    expect(model().pages(U, UTC_30D, FILTERS[1]).length).toBeGreaterThan(0)
    expect(model().pages(U, UTC_30D, FILTERS[3]).length).toBeGreaterThan(0)
  })

  it('filters on other event attributes: answered from the events', async () => {
    const filters = [{ name: 'properties.plan', operator: 'isNotNull', value: [] }]
    const res = await pages(U, { range: '30d', filters })
    expect(res.closedAt).toBeNull()
    expect(res.body).toEqual(model().pages(U, UTC_30D, filters))
  })
})

/**
 * Inserts `rows`, which change what the build holds: the next answer must come from the events and
 * be right, and once the build that answer started is done, from the sealed history again, still right.
 */
async function changeUnderTheBuild(rows: EventRow[]): Promise<void> {
  await insert(rows)
  const changed = await pages(U, { range: '30d' })
  expect(changed.closedAt).toBeNull()
  expect(changed.body).toEqual(model().pages(U, UTC_30D))
  await h.sealed!.settled(U)
  const rebuilt = await pages(U, { range: '30d' })
  expect(rebuilt.closedAt).toBe(C_UTC)
  expect(rebuilt.body).toEqual(model().pages(U, UTC_30D))
}

// Last: these change the data.
describe('filtered on the country alone: whole UTC days from the day rows by country', () => {
  const FILTERS: Filter[][] = [
    [{ name: 'country', operator: 'is', value: ['US'] }],
    [{ name: 'country', operator: 'isNot', value: ['SE', 'US'] }],
    [{ name: 'country', operator: 'startsWith', value: ['D'] }, { name: 'path', operator: 'startsWith', value: ['/'] }],
    [{ name: 'country', operator: 'is', value: ['SE'] }, { name: 'name', operator: 'is', value: ['screen_view'] }],
  ]
  for (const [label, project, query, w, closedAt] of WINDOWS) {
    it(label, async () => {
      for (const filters of FILTERS) {
        const expected = model().pages(project, w, filters)
        const res = await pages(project, { ...(query as object), filters })
        expect(res.closedAt).toBe(closedAt)
        expect(res.body).toEqual(expected)
        const computed = await inline(project, { ...(query as object), filters })
        expect(computed.body).toEqual(expected)
      }
    })
  }

  it('has rows to keep and rows to leave out', () => {
    for (const filters of FILTERS) {
      const kept = model().pages(U, UTC_30D, filters)
      expect(kept.length).toBeGreaterThan(0)
      expect(kept).not.toEqual(model().pages(U, UTC_30D))
    }
  })

  it('reads no view for whole UTC days, and the views again with a filter on another session attribute', async () => {
    const answer = async (filters: Filter[]) => {
      const res = await h.get(U, 'pages', { range: '30d', limit: 1000, explain: 'sql', filters })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      return (res.body.sql as string[]).at(-1)!
    }
    const byCountry = await answer(FILTERS[0]!)
    expect(byCountry).toContain('FROM sealed_page_countries')
    expect(byCountry).not.toContain('FROM sealed_page_views')
    const byBrowser = await answer([...FILTERS[0]!, { name: 'browser', operator: 'is', value: ['Chrome'] }])
    expect(byBrowser).not.toContain('FROM sealed_page_countries')
    expect(byBrowser).toContain('FROM sealed_page_views')
  })
})

describe('when the data changes under the build', () => {
  it('an insert before C', async () => {
    await changeUnderTheBuild([extra('rx-late', 'rx-p7', '2026-04-02T08:00:00Z'), extra('rx-late', 'rx-p7', '2026-04-02T08:00:42Z', { path: '/rx/b' })])
  })

  it('an event after C in a session of the build whose last event was a view', async () => {
    // rx-r1 viewed /rx/a on 12 April; this event after C ends that view. The rebuild holds it out.
    await changeUnderTheBuild([extra('rx-r1', 'rx-p3', '2026-04-14T22:00:00Z', { name: 'click', path: '', origin: '', properties: {} })])
  })

  it('a view after C in a session of the build that ended on a click', async () => {
    // rx-days ended on a click on 11 April; a view now changes its counts on both sides.
    await changeUnderTheBuild([extra('rx-days', 'rx-p2', '2026-04-14T22:10:00Z', { path: '/rx/b' })])
  })

  it('keeps no build but the newest and the one it replaced', async () => {
    // Four builds of U by now: the first, and one after each change above.
    expect(await storedBuilds(U)).toEqual({ views: 2, days: 2, keys: 2, registered: 2 })
  })

  it('moves C forward once the build is an hour behind', async () => {
    h.clock.now = new Date('2026-04-15T01:30:00Z')
    const w = windowOf('2026-03-16T00:00:00Z', '2026-04-16T00:00:00Z', 'UTC')
    const before = await pages(U, { range: '30d' })
    expect(before.closedAt).toBe(C_UTC)
    expect(before.body).toEqual(model().pages(U, w))
    await h.sealed!.settled(U)
    const after = await pages(U, { range: '30d' })
    expect(after.closedAt).toBe(Date.parse('2026-04-15T00:00:00Z'))
    expect(after.body).toEqual(model().pages(U, w))
  })

  it("drops the replaced build once no request can still read it, in the builds' lane, and answers alike from the one left", async () => {
    // Where each drop ran: the builds' lane, not the requests' line.
    const drops: (string | undefined)[] = []
    const runner = { ...h.rt.runner, command: (stmt: Statement, opts?: CommandOptions) => (stmt.name === 'versioned_drop' && drops.push(opts?.background), h.rt.runner.command(stmt, opts)) }
    const sealed = new SealedHistory({ runner, logger: h.rt.logger, now: () => h.clock.now, queryTimeoutS: 10, rebuildIntervalMs: 0, insertsTtlMs: 0, replacedGraceMs: 300 })
    const app = testApp(h.rt, { now: () => h.clock.now, sealed })
    const root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'root-grace' })
    await sealed.build(U)
    expect(await storedBuilds(U)).toEqual({ views: 2, days: 2, keys: 2, registered: 2 })
    const deadline = Date.now() + 20_000
    while ((await storedBuilds(U)).registered > 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await storedBuilds(U)).toEqual({ views: 1, days: 1, keys: 1, registered: 1 })
    expect(drops.length).toBeGreaterThan(0)
    expect(drops.every((lane) => lane === 'build')).toBe(true)
    const res = await requestAs(app, `http://quarry.test/insights/${U}/pages?${queryString({ range: '30d', limit: 1000 })}`, root)
    expect(res.headers.get('x-quarry-sealed-until')).not.toBeNull()
    expect(res.body).toEqual(model().pages(U, windowOf('2026-03-16T00:00:00Z', '2026-04-16T00:00:00Z', 'UTC')))
    await sealed.stop()
  })
})

/** How many builds of a project each of three page tables holds, and how many are registered. */
async function storedBuilds(project: string) {
  const [stored] = await h.rt.runner.rows<{ views: number; days: number; keys: number; registered: number }>(
    {
      name: 'versions',
      sql: `SELECT
        (SELECT uniqExact(version) FROM sealed_page_views WHERE project_id = {p:String}) AS views,
        (SELECT uniqExact(version) FROM sealed_page_days WHERE project_id = {p:String}) AS days,
        (SELECT uniqExact(version) FROM sealed_page_keys WHERE project_id = {p:String}) AS keys,
        (SELECT uniqExact(version) FROM sealed_builds WHERE project_id = {p:String}) AS registered`,
      params: { p: project },
    },
    { timeoutS: 10 },
  )
  return stored!
}
