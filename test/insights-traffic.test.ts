/**
 * OpenPanel's newer web-traffic routes (overview, pages/top, pages/entry_exit, pages/performance,
 * traffic/referrers|geo|devices) against the reference model computed from the inserted rows: UTC
 * and Stockholm over a DST change, a timezone override with a half-hour offset, an unaligned window
 * of ISO instants; each answered the same by an app over the sealed history
 * and by one that reads the events; bad input as 400s in the envelope; and every route through the
 * generated typed client.
 */
import createClient from 'openapi-fetch'
import { DateTime } from 'luxon'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../src/auth/clients.ts'
import { buildEvents, eventId, NOW, PROJECTS } from './fixtures/insights-data.ts'
import { openInsights, queryString, requestAs, type Harness, type Query, type Reply } from './fixtures/insights-harness.ts'
import { byteCompare, Dataset, effective, ms, round2, toRow, viewMatches, windowOf, type EventRow, type Filter, type Interval, type PageRow, type Window } from './fixtures/insights-model.ts'
import type { paths } from './generated/quarry-api.js'
import { testApp } from './helpers/runtime.ts'

const U = PROJECTS.utc.id
const S = PROJECTS.sthlm.id

let h: Harness
/** The same data through an app without the sealed history: it reads the events. */
let plain: (project: string, route: string, query?: Query) => Promise<Reply>
let api: ReturnType<typeof createClient<paths>>
let model: Dataset
let events: EventRow[]

const TEMPLATE = buildEvents().find((e) => e.project_id === U)!
let nextId = 800_000
function row(session: string, at: string, fields: Partial<EventRow>): EventRow {
  return { ...TEMPLATE, id: eventId(++nextId), session_id: session, device_id: 'tx-dev', profile_id: 'tx-dev', created_at: toRow(Date.parse(at)), properties: {}, ...fields }
}

/** Purchases recorded on the pages where they happened, which pages/top counts as those pages' revenue. */
const PURCHASES: EventRow[] = [
  row('tx-buy', '2026-04-13T14:00:00Z', { name: 'screen_view', origin: 'https://example.com', path: '/pricing', properties: { __title: 'Pricing' } }),
  row('tx-buy', '2026-04-13T14:01:00Z', { name: 'revenue', origin: 'https://example.com', path: '/pricing', revenue: 2100 }),
  row('tx-buy', '2026-04-13T14:02:00Z', { name: 'screen_view', origin: 'https://example.com', path: '/checkout', properties: { __title: 'Checkout' } }),
  row('tx-buy', '2026-04-13T14:02:30Z', { name: 'revenue', origin: 'https://example.com', path: '/checkout', revenue: 800 }),
  // Only `revenue` events are revenue, whatever other events carry in the column.
  row('tx-buy', '2026-04-13T14:02:45Z', { name: 'checkout', origin: 'https://example.com', path: '/checkout', revenue: 333 }),
]

beforeAll(async () => {
  h = await openInsights({ sealed: true })
  await h.rt.engine.client.insert({ table: 'events', values: PURCHASES, format: 'JSONEachRow' })
  events = [...h.data.events, ...PURCHASES]
  model = new Dataset(events)
  for (const p of [PROJECTS.utc, PROJECTS.sthlm]) {
    await h.sealed!.build(p.id)
  }
  const client = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'traffic-root' })
  const app = testApp(h.rt, { now: () => NOW })
  plain = (project, route, query) => {
    const qs = queryString(query)
    return requestAs(app, `http://quarry.test/insights/${project}/${route}${qs ? `?${qs}` : ''}`, client)
  }
  const headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
  api = createClient<paths>({ baseUrl: 'http://quarry.test', fetch: async (req) => app.fetch(req), headers })
})
afterAll(async () => {
  await h?.dispose()
})

// ---------------------------------------------------------------------------------------------
// What each route should answer, from the model

const iso = (t: number, zone: string) => DateTime.fromMillis(t, { zone }).toISO({ suppressMilliseconds: true })!
const key = (origin: string, path: string) => JSON.stringify([origin, path])

function overview(project: string, w: Window, interval: Interval, filters: readonly Filter[] = []) {
  const m = model.metrics(project, w, interval, filters)
  return { summary: m.metrics, series: m.series, interval, startDate: iso(w.start, w.timezone), endDate: iso(w.end, w.timezone) }
}

function top(project: string, w: Window, filters: readonly Filter[] = []) {
  const revenue = new Map<string, number>()
  for (const e of events) {
    if (e.project_id !== project || e.name !== 'revenue' || ms(e) < w.start || ms(e) >= w.end) continue
    // Filtered, a revenue event counts as a page view would: its own attributes, its session's.
    if (effective(filters).length > 0 && !viewMatches(e, model.sessionOf(e), filters)) continue
    revenue.set(key(e.origin, e.path), (revenue.get(key(e.origin, e.path)) ?? 0) + e.revenue)
  }
  return model
    .pages(project, w, filters)
    .filter((r) => r.path !== '')
    .slice(0, 1000)
    .map((r) => ({ origin: r.origin, path: r.path, sessions: r.sessions, pageviews: r.pageviews, revenue: revenue.get(key(r.origin, r.path)) ?? 0 }))
}

function entryExit(project: string, w: Window, mode: 'entry' | 'exit', filters: readonly Filter[] = []) {
  return model
    .breakdown(project, `${mode}_page`, w, filters)
    .slice(0, 1000)
    .map(({ prefix, name, ...rest }) => ({ origin: prefix ?? '', path: name ?? '', ...rest }))
}

type Sort = 'sessions' | 'pageviews' | 'bounce_rate' | 'avg_duration'
function performance(project: string, w: Window, q: { search?: string; sortBy?: Sort; sortOrder?: 'asc' | 'desc'; limit?: number } = {}, filters: readonly Filter[] = []) {
  const { search, sortBy = 'sessions', sortOrder = 'desc', limit = 50 } = q
  const sign = sortOrder === 'asc' ? 1 : -1
  const rows = model
    .pages(project, w, filters)
    .filter((r) => r.path !== '' && (!search || [r.path, r.origin, r.title].some((t) => t.includes(search))))
    .sort((a: PageRow, b: PageRow) => sign * (a[sortBy] - b[sortBy]) || b.sessions - a.sessions || byteCompare(a.origin, b.origin) || byteCompare(a.path, b.path))
  const pages = rows.slice(0, limit).map((r) => {
    const minutes = round2(r.avg_duration / 60)
    return {
      origin: r.origin,
      path: r.path,
      title: r.title,
      sessions: r.sessions,
      pageviews: r.pageviews,
      bounce_rate: r.bounce_rate,
      avg_duration: minutes,
      seo_signals: { high_bounce: r.bounce_rate > 70, low_engagement: minutes < 1, good_landing_page: r.bounce_rate < 40 && minutes > 2 },
    }
  })
  return { total_pages: rows.length, shown: pages.length, pages }
}

const traffic = (project: string, w: Window, dimension: string, filters: readonly Filter[] = []) => model.breakdown(project, dimension, w, filters).slice(0, 1000)

// ---------------------------------------------------------------------------------------------

interface Case {
  label: string
  project: string
  query: Query & Record<string, string>
  window: Window
  interval: Interval
  /** Also every mode, sort, search and breakdown (the others check each route's default). */
  full?: boolean
}

const CASES: Case[] = [
  { label: 'UTC, no dates (the default 30 days, today included)', project: U, query: {}, window: windowOf('2026-03-15T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC'), interval: 'day', full: true },
  { label: 'Stockholm over the DST change, date-only endDate includes its day', project: S, query: { startDate: '2026-03-27', endDate: '2026-04-01', interval: 'week' }, window: windowOf('2026-03-27T00:00:00+01:00', '2026-04-02T00:00:00+02:00', 'Europe/Stockholm'), interval: 'week', full: true },
  { label: 'Stockholm 30d by month', project: S, query: { range: '30d', interval: 'month' }, window: windowOf('2026-03-16T00:00:00+01:00', '2026-04-16T00:00:00+02:00', 'Europe/Stockholm'), interval: 'month' },
  { label: 'UTC project read in Asia/Kolkata (+05:30), 7d', project: U, query: { range: '7d', timezone: 'Asia/Kolkata' }, window: windowOf('2026-04-08T00:00:00+05:30', '2026-04-16T00:00:00+05:30', 'Asia/Kolkata'), interval: 'day' },
  { label: 'UTC, an unaligned window of instants, by hour', project: U, query: { startDate: '2026-04-09T08:10:00Z', endDate: '2026-04-13T14:01:40Z', interval: 'hour' }, window: windowOf('2026-04-09T08:10:00Z', '2026-04-13T14:01:40.001Z', 'UTC'), interval: 'hour', full: true },
]

/** Both apps give `expected`, with the resolved window in the headers. */
async function expectBoth(c: Case, route: string, query: Query & Record<string, string>, expected: unknown): Promise<Reply> {
  const sealed = await h.get(c.project, route, query)
  const direct = await plain(c.project, route, query)
  for (const [how, res] of [['sealed', sealed], ['events', direct]] as const) {
    expect(res.status, `${how} ${route}: ${JSON.stringify(res.body)}`).toBe(200)
    expect(res.body, `${how} ${route}`).toEqual(expected)
    expect(res.headers.get('x-quarry-range')).toBe(`${iso(c.window.start, c.window.timezone)}/${iso(c.window.end, c.window.timezone)}`)
    expect(res.headers.get('x-quarry-timezone')).toBe(c.window.timezone)
  }
  return sealed
}

const withoutInterval = ({ interval: _, ...q }: Record<string, string>) => q

describe.each(CASES)('$label', (c) => {
  const q = withoutInterval(c.query)
  it('overview: the /metrics totals and series of the window', async () => {
    const expected = overview(c.project, c.window, c.interval)
    expect(expected.summary.total_sessions).toBeGreaterThan(0)
    await expectBoth(c, 'overview', c.query, expected)
  })

  it('pages/top and pages/entry_exit (entry and exit)', async () => {
    const expected = top(c.project, c.window)
    expect(expected.length).toBeGreaterThan(0)
    await expectBoth(c, 'pages/top', q, expected)
    await expectBoth(c, 'pages/entry_exit', q, entryExit(c.project, c.window, 'entry'))
    if (c.full) await expectBoth(c, 'pages/entry_exit', { ...q, mode: 'exit' }, entryExit(c.project, c.window, 'exit'))
  })

  it('pages/performance: default, sorted, searched and cut', async () => {
    await expectBoth(c, 'pages/performance', q, performance(c.project, c.window))
    if (!c.full) return
    await expectBoth(c, 'pages/performance', { ...q, sortBy: 'bounce_rate', sortOrder: 'asc', limit: '3' }, performance(c.project, c.window, { sortBy: 'bounce_rate', sortOrder: 'asc', limit: 3 }))
    await expectBoth(c, 'pages/performance', { ...q, sortBy: 'avg_duration' }, performance(c.project, c.window, { sortBy: 'avg_duration' }))
    await expectBoth(c, 'pages/performance', { ...q, search: '/blog', sortBy: 'pageviews' }, performance(c.project, c.window, { search: '/blog', sortBy: 'pageviews' }))
  })

  it('traffic/referrers, geo and devices: each default and another breakdown', async () => {
    for (const [group, breakdowns] of [['referrers', ['referrer_name', 'utm_source']], ['geo', ['country', 'city']], ['devices', ['device', 'browser']]] as const) {
      await expectBoth(c, `traffic/${group}`, q, traffic(c.project, c.window, breakdowns[0]))
      if (c.full) await expectBoth(c, `traffic/${group}`, { ...q, breakdown: breakdowns[1] }, traffic(c.project, c.window, breakdowns[1]))
    }
  })
})

describe('filters, which OpenPanel drops on these routes, narrow them as they narrow the routes they restate', () => {
  const c = CASES[0]!
  const q = withoutInterval(c.query)
  const SETS: Filter[][] = [
    [{ name: 'country', operator: 'is', value: ['US'] }],
    [{ name: 'path', operator: 'contains', value: ['/pricing'] }],
    [
      { name: 'browser', operator: 'isNot', value: ['Safari'] },
      { name: 'path', operator: 'startsWith', value: ['/'] },
    ],
  ]
  it.each(SETS.map((f) => [JSON.stringify(f), f] as const))('%s', async (_, filters) => {
    const fq = { ...q, filters: JSON.stringify(filters) }
    const narrowed = overview(c.project, c.window, c.interval, filters)
    // The filter keeps some sessions and drops others, so an unfiltered answer would not pass.
    expect(narrowed.summary.total_sessions).toBeGreaterThan(0)
    expect(narrowed.summary.total_sessions).toBeLessThan(overview(c.project, c.window, c.interval).summary.total_sessions)
    await expectBoth(c, 'overview', fq, narrowed)
    await expectBoth(c, 'pages/top', fq, top(c.project, c.window, filters))
    await expectBoth(c, 'pages/entry_exit', fq, entryExit(c.project, c.window, 'entry', filters))
    await expectBoth(c, 'pages/performance', fq, performance(c.project, c.window, {}, filters))
    await expectBoth(c, 'traffic/geo', { ...fq, breakdown: 'city' }, traffic(c.project, c.window, 'city', filters))
  })
})

describe('by hand', () => {
  const w = CASES[0]!.window
  it('the fixture exercises revenue on pages, empty entry pages, search and SEO signals', () => {
    expect(top(U, w).filter((r) => r.revenue > 0).map((r) => [r.path, r.revenue])).toEqual([['/pricing', 2100], ['/checkout', 800]])
    expect(entryExit(U, w, 'entry').some((r) => r.path === '' && r.origin === '')).toBe(true)
    const pages = performance(U, w, { limit: 1000 }).pages
    for (const signal of ['high_bounce', 'low_engagement', 'good_landing_page'] as const) {
      expect(new Set(pages.map((p) => p.seo_signals[signal])), signal).toEqual(new Set([true, false]))
    }
    expect(performance(U, w, { search: '%' }).pages.map((p) => p.path)).toEqual(['/blog/100%_off'])
  })

  it('reads the sealed history where it holds, and says so', async () => {
    for (const route of ['overview', 'pages/top', 'pages/performance', 'pages/entry_exit', 'traffic/geo']) {
      expect((await h.get(U, route)).headers.get('x-quarry-sealed-until'), route).toBe('2026-04-14T21:00:00Z')
    }
  })

  it('search is literal text: % and _ match only themselves, case counts', async () => {
    const res = await plain(U, 'pages/performance', { search: '100%_' })
    expect(res.body.pages.map((p: { path: string }) => p.path)).toEqual(['/blog/100%_off'])
    // 'docs' is in the path /docs/intro, whose titles are Intro and Introduction; 'Docs' only in titles.
    const lower = performance(U, w, { search: 'docs' })
    const upper = performance(U, w, { search: 'Docs' })
    expect(lower.pages.map((p) => p.path)).toContain('/docs/intro')
    expect(upper.pages.map((p) => p.path)).not.toContain('/docs/intro')
    expect(upper.pages.map((p) => p.title)).toContain('Docs')
    expect((await plain(U, 'pages/performance', { search: 'docs' })).body).toEqual(lower)
    expect((await plain(U, 'pages/performance', { search: 'Docs' })).body).toEqual(upper)
  })
})

describe('bad input: 400 in the envelope, naming every bad parameter', () => {
  const BAD: [string, string, string[]][] = [
    ['overview', 'interval=minute&range=forever', ['interval', 'range']],
    ['pages/top', 'filters=nope&limit=5', ['filters', 'limit']],
    ['pages/entry_exit', 'mode=middle&startDate=2026-13-45', ['mode', 'startDate']],
    ['pages/performance', 'limit=0&sortBy=title&sortOrder=up', ['limit', 'sortBy', 'sortOrder']],
    ['pages/performance', 'limit=501', ['limit']],
    ['traffic/referrers', 'breakdown=country', ['breakdown']],
    ['traffic/geo', 'breakdown=referrer&timezone=Mars%2FBase', ['breakdown', 'timezone']],
    ['traffic/devices', 'startDate=2026-04-10&endDate=2026-04-01', ['startDate']],
  ]
  it.each(BAD)('%s?%s', async (route, query, paths) => {
    const res = await plain(U, route, query)
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ status: 400, error: 'Bad Request', code: 'invalid_parameters', requestId: res.headers.get('x-request-id') })
    expect(res.body.details.map((d: { path: string }) => d.path.split('.')[0]).sort()).toEqual([...paths].sort())
  })
})

describe('through the generated typed client', () => {
  const c = CASES[1]!
  const query = { startDate: '2026-03-27', endDate: '2026-04-01' }
  const path = { projectId: S }
  it('calls every route and gets the model', async () => {
    const o = await api.GET('/insights/{projectId}/overview', { params: { path, query: { ...query, interval: 'week' } } })
    expect(o.data).toEqual(overview(S, c.window, 'week'))
    const t = await api.GET('/insights/{projectId}/pages/top', { params: { path, query } })
    expect(t.data).toEqual(top(S, c.window))
    const e = await api.GET('/insights/{projectId}/pages/entry_exit', { params: { path, query: { ...query, mode: 'exit' } } })
    expect(e.data).toEqual(entryExit(S, c.window, 'exit'))
    const p = await api.GET('/insights/{projectId}/pages/performance', { params: { path, query: { ...query, sortBy: 'pageviews', sortOrder: 'asc', limit: 2 } } })
    expect(p.data).toEqual(performance(S, c.window, { sortBy: 'pageviews', sortOrder: 'asc', limit: 2 }))
    const r = await api.GET('/insights/{projectId}/traffic/referrers', { params: { path, query: { ...query, breakdown: 'referrer_type' } } })
    expect(r.data).toEqual(traffic(S, c.window, 'referrer_type'))
    const g = await api.GET('/insights/{projectId}/traffic/geo', { params: { path, query: { ...query, breakdown: 'region' } } })
    expect(g.data).toEqual(traffic(S, c.window, 'region'))
    const d = await api.GET('/insights/{projectId}/traffic/devices', { params: { path, query: { ...query, breakdown: 'os' } } })
    expect(d.data).toEqual(traffic(S, c.window, 'os'))
    const bad = await api.GET('/insights/{projectId}/traffic/devices', { params: { path, query: { breakdown: 'model' as 'os' } } })
    expect(bad.response.status).toBe(400)
    expect(bad.error).toMatchObject({ code: 'invalid_parameters' })
  })
})
