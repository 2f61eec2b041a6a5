/**
 * OpenPanel's lenient edges and the conventions its clients depend on, through the generated
 * client against the compat fixture: parameters OpenPanel accepts and ignores are accepted and
 * named in X-Quarry-Ignored (and change nothing), names no OpenPanel version knows stay a 400,
 * lists without a limit answer up to 1000 rows, and /metrics with a path filter counts that
 * page's views and revenue. Expected values come from the inserted rows.
 */
import createClient from 'openapi-fetch'
import { describe, expect, it } from 'vitest'
import type { paths } from '../generated/quarry-api.js'
import { createResponseCache } from '../../src/http/cache/middleware.ts'
import { eventsWatermark } from '../../src/http/cache/watermark.ts'
import { testApp } from '../helpers/runtime.ts'
import { compatApp, compatEvents, COUNTRIES, DAYS, headers, ms, NOW, openPanelQuery } from './fixture.ts'

const events = compatEvents()
const from = Date.parse(`${DAYS[0]}T00:00:00Z`)
const to = Date.parse(`${DAYS.at(-1)}T00:00:00Z`) + 86_400_000
const inWindow = events.filter((e) => e.project_id === 'shop' && ms(e) >= from && ms(e) < to)
const WINDOW = { startDate: DAYS[0]!, endDate: DAYS.at(-1)! }
const env = compatApp(events)

const api = (credentials = env.clients.read) =>
  createClient<paths>({ baseUrl: 'http://quarry.test', fetch: async (req) => env.app.fetch(req), headers: headers(credentials), querySerializer: openPanelQuery })
const P = { path: { projectId: 'shop' } }

/** The sessions of the window (by their start) and what each holds. */
function sessions() {
  const byId = new Map<string, typeof events>()
  for (const e of events.filter((x) => x.project_id === 'shop')) byId.set(e.session_id, [...(byId.get(e.session_id) ?? []), e])
  return [...byId.values()].filter((list) => {
    const start = Math.min(...list.map(ms))
    return start >= from && start < to
  })
}

describe('parameters OpenPanel accepts and ignores', () => {
  it('/metrics takes limit and cursor, /live takes range: the same answers, and X-Quarry-Ignored names them', async () => {
    const plain = await api().GET('/insights/{projectId}/metrics', { params: { ...P, query: WINDOW } })
    const lenient = await api().GET('/insights/{projectId}/metrics', { params: { ...P, query: { ...WINDOW, limit: '50', cursor: '2' } } })
    expect(lenient.response.status).toBe(200)
    expect(lenient.response.headers.get('x-quarry-ignored')).toBe('limit, cursor')
    expect(plain.response.headers.get('x-quarry-ignored')).toBeNull()
    expect(lenient.data).toEqual(plain.data)
    const live = await api().GET('/insights/{projectId}/live', { params: { ...P, query: { range: '30d' } } })
    expect([live.response.status, live.response.headers.get('x-quarry-ignored')]).toEqual([200, 'range'])
    expect(live.data).toEqual((await api().GET('/insights/{projectId}/live', { params: P })).data)
  })

  it('a cached answer keeps its X-Quarry-Ignored, and a request without the parameter does not get it', async () => {
    const cache = createResponseCache({ now: () => NOW, watermark: eventsWatermark(env.rt.runner) })
    const cached = testApp(env.rt, { now: () => NOW, responseCache: cache })
    const url = `/export/charts?series=${encodeURIComponent('[{"name":"screen_view"}]')}&startDate=${DAYS[0]}&endDate=${DAYS[1]}`
    const send = (extra: string) => cached.request(`${url}${extra}`, { headers: headers(env.clients.read) })
    const miss = await send('&chartType=bar')
    const hit = await send('&chartType=bar')
    expect([miss.headers.get('x-quarry-cache'), hit.headers.get('x-quarry-cache')]).toEqual(['miss', 'hit'])
    expect([miss.headers.get('x-quarry-ignored'), hit.headers.get('x-quarry-ignored')]).toEqual(['chartType', 'chartType'])
    expect(await hit.json()).toEqual(await miss.json())
    expect((await send('')).headers.get('x-quarry-ignored')).toBeNull()
  })

  it("a filter's type and id are accepted, and a null value is the text null", async () => {
    const filters = [{ id: 'x', name: 'country', operator: 'is', value: ['SE', null], type: 'string' }]
    const res = await api().GET('/insights/{projectId}/metrics', { params: { ...P, query: { ...WINDOW, filters: filters as never } } })
    expect([res.response.status, res.response.headers.get('x-quarry-ignored')]).toEqual([200, 'filters.0.type'])
    expect(res.data?.metrics.total_sessions).toBe(sessions().filter((list) => list[0]!.country === 'SE').length)
  })

  it('a name no OpenPanel version knows is a 400; a 400 names every bad parameter', async () => {
    const typo = await api().GET('/insights/{projectId}/metrics', { params: { ...P, query: { metrik: 'x' } as never } })
    expect([typo.response.status, typo.error?.details]).toEqual([400, [{ path: 'metrik', message: 'unknown parameter' }]])
    const bad = await api().GET('/insights/{projectId}/metrics', { params: { ...P, query: { range: 'nope', startDate: 'garbage', endDate: 'x' } as never } })
    expect(bad.error?.details?.map((d) => d.path).sort()).toEqual(['endDate', 'range', 'startDate'])
    const cohort = await api().GET('/insights/{projectId}/metrics', {
      params: { ...P, query: { filters: [{ name: 'profile_id', operator: 'inCohort', value: ['c1'] }] as never } },
    })
    expect([cohort.response.status, cohort.error?.details?.[0]?.message]).toEqual([400, 'cohorts are not supported: Quarry keeps no cohorts'])
  })

  it('a write client is refused with 403 client_type_not_allowed (OpenPanel: 401; a deliberate difference)', async () => {
    const res = await api(env.clients.write).GET('/insights/{projectId}/metrics', { params: P })
    expect([res.response.status, res.error?.code]).toEqual([403, 'client_type_not_allowed'])
  })
})

describe("OpenPanel's wildcard property keys", () => {
  const skus = (e: (typeof events)[number]) => Object.entries(e.properties).filter(([k]) => /^items\.\d+\.sku$/.test(k)).map(([, v]) => v)
  const cases: [string, string, string[], (e: (typeof events)[number]) => boolean][] = [
    ['items.*.sku is P9', 'is', ['P9'], (e) => skus(e).includes('P9')],
    ['items[*].sku startsWith B', 'startsWith', ['B'], (e) => skus(e).some((v) => v.startsWith('B'))],
    ['items.*.sku isNot A1 (some item is not A1)', 'isNot', ['A1'], (e) => skus(e).some((v) => v !== 'A1')],
  ]
  for (const [label, operator, value, matches] of cases) {
    it(`${label}: the events with a matching key whose value passes`, async () => {
      const name = label.includes('[*]') ? 'properties.items[*].sku' : 'properties.items.*.sku'
      const res = await api().GET('/export/events', { params: { query: { limit: 1000, filters: [{ name, operator, value }] as never } } })
      expect(res.response.status, JSON.stringify(res.error)).toBe(200)
      const body = res.data as Exclude<typeof res.data, string | undefined>
      const expected = events.filter((e) => e.project_id === 'shop' && matches(e)).map((e) => e.id)
      expect(expected.length).toBeGreaterThan(0)
      expect(body.data.map((e) => e.id).sort()).toEqual(expected.sort())
    })
  }
})

describe("OpenPanel's list sizes", () => {
  const pages = [...new Set(inWindow.filter((e) => e.name === 'screen_view').map((e) => e.path))].sort()

  it('/pages without limit answers every page (more than 10, up to 1000), with no next cursor', async () => {
    expect(pages.length).toBeGreaterThan(10)
    const res = await api().GET('/insights/{projectId}/pages', { params: { ...P, query: WINDOW } })
    expect(res.response.status).toBe(200)
    expect(res.data!.map((r) => r.path).sort()).toEqual(pages)
    expect(res.response.headers.get('x-next-cursor')).toBeNull()
    for (const row of res.data!) {
      expect(row.pageviews, row.path).toBe(inWindow.filter((e) => e.name === 'screen_view' && e.path === row.path).length)
    }
  })

  it('cursors still page: limit 5 walks the same rows', async () => {
    const walked: string[] = []
    let cursor: string | undefined
    do {
      const res = await api().GET('/insights/{projectId}/pages', { params: { ...P, query: { ...WINDOW, limit: 5, ...(cursor ? { cursor } : {}) } } })
      walked.push(...res.data!.map((r) => r.path))
      cursor = res.response.headers.get('x-next-cursor') ?? undefined
    } while (cursor)
    expect(walked.sort()).toEqual(pages)
  })

  it('a dimension route without limit answers every value', async () => {
    const res = await api().GET('/insights/{projectId}/country', { params: { ...P, query: WINDOW } })
    const expected = COUNTRIES.filter((c) => sessions().some((list) => list[0]!.country === c))
    expect(res.data!.map((r) => r.name).sort()).toEqual([...expected].sort())
    for (const row of res.data!) expect(row.sessions).toBe(sessions().filter((list) => list[0]!.country === row.name).length)
  })
})

describe('/metrics with a path filter counts that page', () => {
  for (const paths of [['/p1'], ['/p2', '/p3']]) {
    it(`path is ${paths.join(' or ')}: its views and its revenue; the sessions that visited it`, async () => {
      const filters = [{ name: 'path', operator: 'is', value: paths }]
      const res = await api().GET('/insights/{projectId}/metrics', { params: { ...P, query: { ...WINDOW, filters: filters as never, interval: 'day' } } })
      expect(res.response.status, JSON.stringify(res.error)).toBe(200)
      const matching = sessions().filter((list) => list.some((e) => paths.includes(e.path)))
      const views = inWindow.filter((e) => e.name === 'screen_view' && paths.includes(e.path))
      const revenue = inWindow.filter((e) => e.name === 'revenue' && paths.includes(e.path)).reduce((sum, e) => sum + e.revenue, 0)
      expect(views.length).toBeGreaterThan(0)
      expect(res.data!.metrics).toMatchObject({
        total_sessions: matching.length,
        unique_visitors: new Set(matching.map((list) => list[0]!.profile_id)).size,
        total_screen_views: views.length,
        views_per_session: Math.round((100 * views.length) / matching.length) / 100,
        total_revenue: revenue,
      })
      // Each day's views are that page's views of the day.
      expect(res.data!.series.map((b) => b.total_screen_views)).toEqual(DAYS.map((day) => views.filter((e) => e.created_at.startsWith(day)).length))
    })
  }

  it('without a path filter the views are those of the matching sessions, as before', async () => {
    const filters = [{ name: 'country', operator: 'is', value: ['DE'] }]
    const res = await api().GET('/insights/{projectId}/metrics', { params: { ...P, query: { ...WINDOW, filters: filters as never } } })
    const de = sessions().filter((list) => list[0]!.country === 'DE')
    expect(res.data!.metrics.total_screen_views).toBe(de.flat().filter((e) => e.name === 'screen_view').length)
  })
})
