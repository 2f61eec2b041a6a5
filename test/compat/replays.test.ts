/**
 * Request flows of real OpenPanel API clients, replayed through the generated typed client against
 * the compat fixture: an exporter script that pages /export/events day by day with repeated
 * includes (groups among them) until a page comes back empty; a chart widget that calls /export/charts with a read
 * client's credentials and no projectId, sending what a dashboard sends (chartType, metric, ids,
 * typed filters); and a load balancer's and an orchestrator's health probes. Every expected number
 * is computed from the inserted rows.
 */
import createClient from 'openapi-fetch'
import { describe, expect, it } from 'vitest'
import type { paths } from '../generated/quarry-api.js'
import { compatApp, compatEvents, DAYS, exportOrder, headers, isoOf, ms, openPanelQuery, type CompatRow } from './fixture.ts'

const events = compatEvents()
const shop = events.filter((e) => e.project_id === 'shop')
const env = compatApp(events)

const api = (credentials?: { id: string; secret: string }, target = () => env.app) =>
  createClient<paths>({
    baseUrl: 'http://quarry.test',
    fetch: async (req) => target().fetch(req),
    headers: credentials ? headers(credentials) : {},
    querySerializer: openPanelQuery,
  })

/** The event object of an export with includes properties, geo and device, from its row. */
const exported = (e: CompatRow) => ({
  id: e.id,
  name: e.name,
  deviceId: e.device_id,
  profileId: e.profile_id,
  projectId: e.project_id,
  sessionId: e.session_id,
  createdAt: isoOf(e),
  path: e.path,
  origin: e.origin,
  country: e.country,
  city: e.city,
  os: e.os,
  browser: e.browser,
  duration: e.duration,
  properties: e.properties,
  region: e.region,
  longitude: e.longitude,
  latitude: e.latitude,
  osVersion: e.os_version,
  browserVersion: e.browser_version,
  device: e.device,
  brand: e.brand,
  model: e.model,
  groups: e.groups,
})

describe('an exporter paging /export/events by day windows until an empty page', () => {
  it('gets every event of each day once, in order, with the includes it repeated', async () => {
    const client = api(env.clients.root)
    const limit = 7
    for (const day of DAYS) {
      const expected = shop.filter((e) => e.created_at.startsWith(day)).sort(exportOrder)
      const got: unknown[] = []
      for (let page = 1; ; page++) {
        const res = await client.GET('/export/events', {
          params: { query: { projectId: 'shop', start: day, end: day, includes: ['properties', 'geo,device', 'city', 'groups'], limit, page } },
        })
        expect(res.response.status, JSON.stringify(res.error)).toBe(200)
        // city and groups are fields every event has (groups with their values, not OpenPanel's [] without
        // the include): accepted, changing nothing.
        expect(res.response.headers.get('x-quarry-ignored')).toBe('includes.city, includes.groups')
        const body = res.data as Exclude<typeof res.data, string | undefined>
        expect(body.meta).toMatchObject({ totalCount: expected.length, pages: Math.ceil(expected.length / limit), current: page })
        if (body.data.length === 0) break
        got.push(...body.data)
        expect(page).toBeLessThanOrEqual(Math.ceil(expected.length / limit))
      }
      expect(got, day).toEqual(expected.map(exported))
    }
  })

  it('without start and end exports all time, as OpenPanel (the year-old event too); limit 5000 is clamped to 1000 and said', async () => {
    const res = await api(env.clients.read).GET('/export/events', { params: { query: { limit: 5000 } } })
    expect(res.response.status).toBe(200)
    expect(res.response.headers.get('x-quarry-clamped')).toBe('limit=1000')
    const body = res.data as Exclude<typeof res.data, string | undefined>
    expect(shop.length).toBeLessThan(1000)
    expect(body.meta).toMatchObject({ count: shop.length, totalCount: shop.length, pages: 1, current: 1 })
    expect(body.data.map((e) => e.id)).toEqual([...shop].sort(exportOrder).map((e) => e.id))
    expect(body.data.at(-1)?.createdAt).toBe('2025-03-01T08:00:00.000Z')
    expect(res.response.headers.get('x-quarry-range')?.startsWith('1970-01-01T00:00:00')).toBe(true)
  })

  it('page 0 and limit 0 are clamped to 1; the project comes from the read client; a root client without one gets 400', async () => {
    const res = await api(env.clients.read).GET('/export/events', { params: { query: { page: 0, limit: 0 } } })
    expect(res.response.status).toBe(200)
    expect(res.response.headers.get('x-quarry-clamped')).toBe('limit=1, page=1')
    const body = res.data as Exclude<typeof res.data, string | undefined>
    expect(body.data.map((e) => e.id)).toEqual([[...shop].sort(exportOrder)[0]!.id])
    const root = await api(env.clients.root).GET('/export/events', { params: { query: {} } })
    expect([root.response.status, root.error?.code]).toEqual([400, 'project_required'])
    const unknown = await api(env.clients.read).GET('/export/events', { params: { query: { includes: 'cty' } } })
    expect([unknown.response.status, unknown.error?.details?.[0]?.path]).toEqual([400, 'includes'])
  })
})

describe('a chart widget calling /export/charts with a read client and no projectId', () => {
  const series = [
    { id: 'A', name: 'screen_view', displayName: 'Views', segment: 'event', filters: [{ id: 'f1', name: 'path', operator: 'is', value: ['/p1', '/p2'], type: 'string' }] },
    { id: 'B', name: 'revenue', segment: 'property_sum', property: 'revenue' },
    { id: 'C', name: 'click', segment: 'property_sum' },
    { id: 'D', name: 'screen_view', segment: 'user' },
  ] as const

  /** Each series' value per day and country, from the rows. */
  const expectedValue = (letter: string, country: string, day: string): number => {
    const of = (name: string) => shop.filter((e) => e.name === name && e.country === country && e.created_at.startsWith(day))
    if (letter === 'A') return of('screen_view').filter((e) => e.path === '/p1' || e.path === '/p2').length
    if (letter === 'B') return of('revenue').reduce((sum, e) => sum + e.revenue, 0)
    if (letter === 'C') return of('click').length
    return new Set(of('screen_view').map((e) => e.profile_id)).size
  }

  it("answers the read client's project, every group's daily values, and names what it ignored", async () => {
    const res = await api(env.clients.read).GET('/export/charts', {
      params: {
        query: {
          series: series as never,
          breakdowns: [{ id: 'b1', name: 'country' }],
          interval: 'day',
          startDate: DAYS[0],
          endDate: DAYS.at(-1),
          chartType: 'linear',
          metric: 'sum',
          previous: 'false',
        },
      },
    })
    expect(res.response.status, JSON.stringify(res.error)).toBe(200)
    const ignored = res.response.headers.get('x-quarry-ignored')?.split(', ').sort()
    expect(ignored).toEqual(['chartType', 'metric', 'series.0.filters.0.type', 'series.2.segment'])
    const chart = res.data as Exclude<typeof res.data, string | undefined>
    const got = new Map(chart.series.map((s) => [`${s.event.id}/${s.event.breakdowns?.country}`, s]))
    const want = new Map<string, number[]>()
    for (const letter of ['A', 'B', 'C', 'D']) {
      for (const country of new Set(shop.filter((e) => ms(e) >= Date.parse(`${DAYS[0]}T00:00:00Z`)).map((e) => e.country))) {
        const values = DAYS.map((day) => expectedValue(letter, country, day))
        if (values.some((v) => v > 0)) want.set(`${letter}/${country}`, values)
      }
    }
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort())
    for (const [key, values] of want) {
      const s = got.get(key)!
      expect(s.data.map((p) => p.date), key).toEqual(DAYS.map((day) => `${day}T00:00:00Z`))
      expect(s.data.map((p) => p.count), key).toEqual(values)
      expect(s.metrics.sum, key).toBe(values.reduce((a, b) => a + b, 0))
    }
    // Ranked by sum, as OpenPanel.
    const sums = chart.series.map((s) => s.metrics.sum)
    expect(sums).toEqual([...sums].sort((a, b) => b - a))
  })

  it('a root client without projectId gets 400 project_required; an unknown breakdown name stays a 400', async () => {
    const root = await api(env.clients.root).GET('/export/charts', { params: { query: { series: [{ name: 'screen_view' }] as never } } })
    expect([root.response.status, root.error?.code]).toEqual([400, 'project_required'])
    const typo = await api(env.clients.read).GET('/export/charts', {
      params: { query: { series: [{ name: 'screen_view' }] as never, breakdowns: [{ name: 'countree' }] } },
    })
    expect([typo.response.status, typo.error?.details?.[0]?.path]).toEqual([400, 'breakdowns.0.name'])
  })
})
