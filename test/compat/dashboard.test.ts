/**
 * A web-analytics dashboard built on OpenPanel's public API, replayed: the requests it sends when a
 * page loads (overview, top pages, entry pages, referrers, locations, browsers, with `range=30d`),
 * when the user picks dates (`range=custom&startDate=…&endDate=…`, date-only as date pickers send
 * them) and drills into a country, and from its server side with Basic credentials. Each answer is
 * compared with the numbers computed from the inserted rows by the reference model, and the widgets
 * reconcile with each other as a dashboard shows them side by side.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../../src/auth/clients.ts'
import { NOW, PROJECTS } from '../fixtures/insights-data.ts'
import { openInsights, type Harness } from '../fixtures/insights-harness.ts'
import { byteCompare, ms, round2, windowOf, type Window } from '../fixtures/insights-model.ts'
import { testApp } from '../helpers/runtime.ts'

const U = PROJECTS.utc.id

let h: Harness
let send: (path: string, auth?: 'headers' | 'basic') => Promise<{ status: number; body: any; headers: Headers }>

beforeAll(async () => {
  h = await openInsights()
  // The dashboard's own read client, as an OpenPanel user creates one for a project.
  const client = await createClientRow(h.rt.runner, { type: 'read', projectId: U, organizationId: PROJECTS.utc.organizationId, name: 'dashboard' })
  const app = testApp(h.rt, { now: () => NOW })
  send = async (path, auth = 'headers') => {
    const headers: Record<string, string> =
      auth === 'basic'
        ? { authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}` }
        : { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
    const res = await app.request(`https://quarry.test${path}`, { headers: { accept: 'application/json', ...headers } })
    return { status: res.status, body: await res.json(), headers: res.headers }
  }
})
afterAll(async () => {
  await h?.dispose()
})

/** range=30d at the pinned clock (22:37 UTC on 14 April): 15 March to the coming midnight. */
const LAST_30 = windowOf('2026-03-15T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC')
/** startDate=2026-04-01&endDate=2026-04-14: both days whole. */
const PICKED = windowOf('2026-04-01T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC')

const topPages = (w: Window) =>
  h.data
    .pages(U, w)
    .filter((r) => r.path !== '')
    .map((r) => {
      const revenue = h.data.events
        .filter((e) => e.project_id === U && e.name === 'revenue' && e.origin === r.origin && e.path === r.path && ms(e) >= w.start && ms(e) < w.end)
        .reduce((sum, e) => sum + e.revenue, 0)
      return { origin: r.origin, path: r.path, sessions: r.sessions, pageviews: r.pageviews, revenue }
    })

const breakdown = (dimension: string, w: Window) => h.data.breakdown(U, dimension, w)

describe('a dashboard page load (range=30d)', () => {
  it('overview, top pages, entry pages, referrers, countries and browsers', async () => {
    const base = `/insights/${U}`
    const [overview, top, entries, referrers, countries, browsers] = await Promise.all([
      send(`${base}/overview?range=30d&interval=day`),
      send(`${base}/pages/top?range=30d`),
      send(`${base}/pages/entry_exit?range=30d&mode=entry`),
      send(`${base}/traffic/referrers?range=30d`),
      send(`${base}/traffic/geo?range=30d&breakdown=country`),
      send(`${base}/traffic/devices?range=30d&breakdown=browser`),
    ])
    for (const res of [overview, top, entries, referrers, countries, browsers]) expect(res.status, JSON.stringify(res.body)).toBe(200)

    const metrics = h.data.metrics(U, LAST_30, 'day')
    expect(overview.body).toEqual({ summary: metrics.metrics, series: metrics.series, interval: 'day', startDate: '2026-03-15T00:00:00Z', endDate: '2026-04-15T00:00:00Z' })
    expect(overview.body.series).toHaveLength(31)
    expect(top.body).toEqual(topPages(LAST_30))
    expect(entries.body).toEqual(breakdown('entry_page', LAST_30).map(({ prefix, name, ...rest }) => ({ origin: prefix ?? '', path: name ?? '', ...rest })))
    expect(referrers.body).toEqual(breakdown('referrer_name', LAST_30))
    expect(countries.body).toEqual(breakdown('country', LAST_30))
    expect(browsers.body).toEqual(breakdown('browser', LAST_30))

    // Side by side, the widgets agree: every session is in one row of each breakdown, and direct
    // traffic and unknown places are the rows named null.
    const sum = (rows: { sessions: number }[]) => rows.reduce((n, r) => n + r.sessions, 0)
    for (const rows of [entries.body, referrers.body, countries.body, browsers.body]) expect(sum(rows)).toBe(overview.body.summary.total_sessions)
    expect(referrers.body.some((r: { name: string | null }) => r.name === null)).toBe(true)
    expect(countries.body.some((r: { name: string | null }) => r.name === null)).toBe(true)
    // Rows come ranked, ties in a stable order, so the dashboard's tables do not reshuffle on reload.
    const again = await send(`${base}/traffic/referrers?range=30d`)
    expect(again.body).toEqual(referrers.body)
  })
})

describe('the user picks dates, then drills into a country', () => {
  it('range=custom with date-only startDate and endDate: both days whole', async () => {
    const q = 'range=custom&startDate=2026-04-01&endDate=2026-04-14'
    const overview = await send(`/insights/${U}/overview?${q}&interval=week`)
    const metrics = h.data.metrics(U, PICKED, 'week')
    expect(overview.body).toEqual({ summary: metrics.metrics, series: metrics.series, interval: 'week', startDate: '2026-04-01T00:00:00Z', endDate: '2026-04-15T00:00:00Z' })
    // Weeks start on Monday: 30 March, 6 April, 13 April.
    expect(overview.body.series.map((s: { date: string }) => s.date)).toEqual(['2026-03-30T00:00:00Z', '2026-04-06T00:00:00Z', '2026-04-13T00:00:00Z'])
    // 14 April's sessions are in (OpenPanel's date-only endDate would drop its own day).
    expect(h.data.startedIn(U, windowOf('2026-04-14T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC')).length).toBeGreaterThan(0)
    expect(overview.headers.get('x-quarry-range')).toBe('2026-04-01T00:00:00Z/2026-04-15T00:00:00Z')

    const perf = await send(`/insights/${U}/pages/performance?${q}&sortBy=bounce_rate&sortOrder=desc&limit=10`)
    const pages = h.data
      .pages(U, PICKED)
      .filter((r) => r.path !== '')
      .sort((a, b) => b.bounce_rate - a.bounce_rate || b.sessions - a.sessions || byteCompare(a.origin, b.origin) || byteCompare(a.path, b.path))
    expect(perf.body.total_pages).toBe(pages.length)
    expect(perf.body.shown).toBe(10)
    expect(perf.body.pages).toEqual(
      pages.slice(0, 10).map((r) => {
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
      }),
    )

    const cities = await send(`/insights/${U}/traffic/geo?${q}&breakdown=city`)
    expect(cities.body).toEqual(breakdown('city', PICKED))
    // A city row names its country, so "Paris" in France and "Paris" in Texas stay apart.
    const paris = cities.body.filter((r: { name: string | null }) => r.name === 'Paris').map((r: { prefix: string }) => r.prefix)
    expect(paris.sort()).toEqual(['FR', 'US'])
  })
})

describe("the dashboard's server side, with Basic credentials", () => {
  it('UTM sources of the picked dates, and refusals in the envelope', async () => {
    const res = await send(`/insights/${U}/traffic/referrers?startDate=2026-04-01&endDate=2026-04-14&breakdown=utm_source`, 'basic')
    expect(res.status).toBe(200)
    expect(res.body).toEqual(breakdown('utm_source', PICKED))
    const foreign = await send(`/insights/${PROJECTS.sthlm.id}/traffic/referrers?range=30d`, 'basic')
    expect(foreign.status).toBe(403)
    expect(foreign.body).toMatchObject({ status: 403, code: 'project_forbidden' })
    const bad = await send(`/insights/${U}/traffic/referrers?breakdown=browser`)
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ status: 400, code: 'invalid_parameters', details: [expect.objectContaining({ path: 'breakdown' })] })
  })
})
