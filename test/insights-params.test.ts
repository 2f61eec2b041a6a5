/**
 * The common parameters of /insights: every `range` on a pinned clock (X-Quarry-Range and
 * X-Quarry-Timezone written out by hand), startDate/endDate in all their forms, every filter
 * operator and notation against the reference model, and the 400s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventId, NOW, PROJECTS, WEIRD } from './fixtures/insights-data.ts'
import { openInsights, type Harness, type Query } from './fixtures/insights-harness.ts'
import { effective, windowOf, type Filter, type Window } from './fixtures/insights-model.ts'

let h: Harness
beforeAll(async () => {
  h = await openInsights()
})
afterAll(async () => {
  await h?.dispose()
})

const U = PROJECTS.utc.id
const S = PROJECTS.sthlm.id

const rangeOf = async (project: string, query: Query, route = 'metrics') => {
  const res = await h.get(project, route, query)
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return { range: res.headers.get('x-quarry-range'), timezone: res.headers.get('x-quarry-timezone') }
}

const detailPaths = (body: { details?: { path: string }[] }) => (body.details ?? []).map((d) => d.path)

async function expect400(project: string, route: string, query: Query, path: string) {
  const res = await h.get(project, route, query)
  expect(res.status, `${route} ${typeof query === 'string' ? query : JSON.stringify(query)}: ${JSON.stringify(res.body)}`).toBe(400)
  expect(res.body).toMatchObject({ status: 400, code: expect.any(String), message: expect.any(String), requestId: expect.any(String) })
  expect(detailPaths(res.body)).toContain(path)
  return res
}

async function at<T>(iso: string, run: () => Promise<T>): Promise<T> {
  h.clock.now = new Date(iso)
  try {
    return await run()
  } finally {
    h.clock.now = NOW
  }
}

// ---------------------------------------------------------------------------------------------

describe('range, on the pinned clock 2026-04-14T22:37:12.345Z', () => {
  // Written out by hand from OpenPanel's spans, made half-open.
  const UTC: Record<string, string> = {
    '30min': '2026-04-14T22:07:00Z/2026-04-14T22:38:00Z',
    lastHour: '2026-04-14T21:37:00Z/2026-04-14T22:38:00Z',
    last24h: '2026-04-13T22:37:00Z/2026-04-14T22:38:00Z',
    today: '2026-04-14T00:00:00Z/2026-04-15T00:00:00Z',
    yesterday: '2026-04-13T00:00:00Z/2026-04-14T00:00:00Z',
    '7d': '2026-04-07T00:00:00Z/2026-04-15T00:00:00Z',
    '30d': '2026-03-15T00:00:00Z/2026-04-15T00:00:00Z',
    '3m': '2026-01-14T00:00:00Z/2026-04-15T00:00:00Z',
    '6m': '2025-10-14T00:00:00Z/2026-04-15T00:00:00Z',
    '12m': '2025-04-01T00:00:00Z/2026-05-01T00:00:00Z',
    monthToDate: '2026-04-01T00:00:00Z/2026-04-15T00:00:00Z',
    lastMonth: '2026-03-01T00:00:00Z/2026-04-01T00:00:00Z',
    yearToDate: '2026-01-01T00:00:00Z/2026-04-15T00:00:00Z',
    lastYear: '2025-01-01T00:00:00Z/2026-01-01T00:00:00Z',
    custom: '2026-03-15T00:00:00Z/2026-04-15T00:00:00Z',
  }
  // In Stockholm it is already 00:37:12.345 on the 15th (CEST, +02:00).
  const STOCKHOLM: Record<string, string> = {
    '30min': '2026-04-15T00:07:00+02:00/2026-04-15T00:38:00+02:00',
    lastHour: '2026-04-14T23:37:00+02:00/2026-04-15T00:38:00+02:00',
    last24h: '2026-04-14T00:37:00+02:00/2026-04-15T00:38:00+02:00',
    today: '2026-04-15T00:00:00+02:00/2026-04-16T00:00:00+02:00',
    yesterday: '2026-04-14T00:00:00+02:00/2026-04-15T00:00:00+02:00',
    '7d': '2026-04-08T00:00:00+02:00/2026-04-16T00:00:00+02:00',
    '30d': '2026-03-16T00:00:00+01:00/2026-04-16T00:00:00+02:00',
    '3m': '2026-01-15T00:00:00+01:00/2026-04-16T00:00:00+02:00',
    '6m': '2025-10-15T00:00:00+02:00/2026-04-16T00:00:00+02:00',
    '12m': '2025-04-01T00:00:00+02:00/2026-05-01T00:00:00+02:00',
    monthToDate: '2026-04-01T00:00:00+02:00/2026-04-16T00:00:00+02:00',
    lastMonth: '2026-03-01T00:00:00+01:00/2026-04-01T00:00:00+02:00',
    yearToDate: '2026-01-01T00:00:00+01:00/2026-04-16T00:00:00+02:00',
    lastYear: '2025-01-01T00:00:00+01:00/2026-01-01T00:00:00+01:00',
    custom: '2026-03-16T00:00:00+01:00/2026-04-16T00:00:00+02:00',
  }

  it('covers every range the issue lists', () => {
    const all = ['30min', 'lastHour', 'last24h', 'today', 'yesterday', '7d', '30d', '3m', '6m', '12m', 'monthToDate', 'lastMonth', 'yearToDate', 'lastYear', 'custom']
    expect(Object.keys(UTC).sort()).toEqual([...all].sort())
    expect(Object.keys(STOCKHOLM).sort()).toEqual([...all].sort())
  })

  for (const [range, expected] of Object.entries(UTC)) {
    it(`${range}: UTC and Europe/Stockholm, on /metrics, /pages and a dimension`, async () => {
      for (const route of ['metrics', 'pages', 'referrer']) {
        expect(await rangeOf(U, { range }, route), route).toEqual({ range: expected, timezone: 'UTC' })
        expect(await rangeOf(S, { range }, route), route).toEqual({ range: STOCKHOLM[range], timezone: 'Europe/Stockholm' })
      }
      // The numbers are those of that window.
      const [start, end] = STOCKHOLM[range]!.split('/') as [string, string]
      const res = await h.get(S, 'metrics', { range })
      expect(res.body.metrics).toEqual(h.data.metricValues(S, windowOf(start, end, 'Europe/Stockholm')))
    })
  }

  it('no range means 7d', async () => {
    expect(await rangeOf(U, {})).toEqual({ range: UTC['7d'], timezone: 'UTC' })
    expect(await rangeOf(S, {}, 'pages')).toEqual({ range: STOCKHOLM['7d'], timezone: 'Europe/Stockholm' })
  })

  it('a timezone override resolves the range there', async () => {
    expect(await rangeOf(U, { range: 'today', timezone: 'Europe/Stockholm' })).toEqual({ range: STOCKHOLM.today, timezone: 'Europe/Stockholm' })
    expect(await rangeOf(S, { range: '7d', timezone: 'UTC' }, 'country')).toEqual({ range: UTC['7d'], timezone: 'UTC' })
    expect(await rangeOf(U, { range: 'today', timezone: 'Asia/Kolkata' })).toEqual({
      range: '2026-04-15T00:00:00+05:30/2026-04-16T00:00:00+05:30',
      timezone: 'Asia/Kolkata',
    })
    expect(await rangeOf(U, { range: 'lastHour', timezone: 'Asia/Kathmandu' })).toEqual({
      range: '2026-04-15T03:22:00+05:45/2026-04-15T04:23:00+05:45',
      timezone: 'Asia/Kathmandu',
    })
  })

  it('unknown range values are a 400 naming range', async () => {
    for (const range of ['90d', 'Today', '', 'week']) await expect400(U, 'metrics', { range }, 'range')
  })

  it('on the day of the spring change (Stockholm, 14:00 CEST on 29 March)', async () => {
    await at('2026-03-29T12:00:00.000Z', async () => {
      expect((await rangeOf(S, { range: 'today' })).range).toBe('2026-03-29T00:00:00+01:00/2026-03-30T00:00:00+02:00')
      expect((await rangeOf(S, { range: 'yesterday' })).range).toBe('2026-03-28T00:00:00+01:00/2026-03-29T00:00:00+01:00')
      // 24 hours back is 13:00 CET, not 14:00.
      expect((await rangeOf(S, { range: 'last24h' })).range).toBe('2026-03-28T13:00:00+01:00/2026-03-29T14:01:00+02:00')
      expect((await rangeOf(S, { range: '7d' })).range).toBe('2026-03-22T00:00:00+01:00/2026-03-30T00:00:00+02:00')
      const today = await h.get(S, 'metrics', { range: 'today' })
      expect(today.body.series).toHaveLength(23)
    })
    await at('2026-03-29T01:30:00.000Z', async () => {
      // 03:30 CEST; an hour earlier was 01:30 CET.
      expect((await rangeOf(S, { range: 'lastHour' })).range).toBe('2026-03-29T01:30:00+01:00/2026-03-29T03:31:00+02:00')
      expect((await rangeOf(S, { range: '30min' })).range).toBe('2026-03-29T03:00:00+02:00/2026-03-29T03:31:00+02:00')
      const w = windowOf('2026-03-29T01:30:00+01:00', '2026-03-29T03:31:00+02:00', 'Europe/Stockholm')
      const res = await h.get(S, 'metrics', { range: 'lastHour' })
      expect(res.body).toEqual(h.data.metrics(S, w, 'hour'))
    })
  })

  it('month arithmetic at the end of a month (31 May 2026)', async () => {
    await at('2026-05-31T10:00:00.000Z', async () => {
      expect((await rangeOf(U, { range: '3m' })).range).toBe('2026-02-28T00:00:00Z/2026-06-01T00:00:00Z')
      expect((await rangeOf(U, { range: '6m' })).range).toBe('2025-11-30T00:00:00Z/2026-06-01T00:00:00Z')
      expect((await rangeOf(U, { range: '12m' })).range).toBe('2025-05-01T00:00:00Z/2026-06-01T00:00:00Z')
      expect((await rangeOf(U, { range: 'lastMonth' })).range).toBe('2026-04-01T00:00:00Z/2026-05-01T00:00:00Z')
      expect((await rangeOf(U, { range: 'monthToDate' })).range).toBe('2026-05-01T00:00:00Z/2026-06-01T00:00:00Z')
    })
  })

  it('on 1 January: yearToDate is one day, lastYear the whole previous year', async () => {
    await at('2026-01-01T08:00:00.000Z', async () => {
      expect((await rangeOf(U, { range: 'yearToDate' })).range).toBe('2026-01-01T00:00:00Z/2026-01-02T00:00:00Z')
      expect((await rangeOf(U, { range: 'lastYear' })).range).toBe('2025-01-01T00:00:00Z/2026-01-01T00:00:00Z')
      expect((await rangeOf(U, { range: 'lastMonth' })).range).toBe('2025-12-01T00:00:00Z/2026-01-01T00:00:00Z')
    })
  })

  it('/live carries the range headers too: the five minutes it counts', async () => {
    const res = await h.get(S, 'live')
    expect(res.headers.get('x-quarry-timezone')).toBe('Europe/Stockholm')
    expect(res.headers.get('x-quarry-range')).toBe('2026-04-15T00:32:12.345+02:00/2026-04-15T00:37:12.346+02:00')
  })
})

// ---------------------------------------------------------------------------------------------

describe('startDate and endDate', () => {
  const cases: [string, string, Query, string][] = [
    ['whole local days (end inclusive)', S, { startDate: '2026-03-29', endDate: '2026-03-29' }, '2026-03-29T00:00:00+01:00/2026-03-30T00:00:00+02:00'],
    ['several local days', S, { startDate: '2026-03-28', endDate: '2026-03-30' }, '2026-03-28T00:00:00+01:00/2026-03-31T00:00:00+02:00'],
    ['date-times with Z are instants', S, { startDate: '2026-03-29T00:30:00Z', endDate: '2026-03-29T01:00:00Z' }, '2026-03-29T01:30:00+01:00/2026-03-29T03:00:00.001+02:00'],
    ['date-times with offsets are instants', U, { startDate: '2026-04-10T02:00:00+02:00', endDate: '2026-04-11T05:30:00+05:30' }, '2026-04-10T00:00:00Z/2026-04-11T00:00:00.001Z'],
    ['offsets without a colon, or hours only', U, { startDate: '2026-04-10T02:00:00+0200', endDate: '2026-04-10T03:00:00+02' }, '2026-04-10T00:00:00Z/2026-04-10T01:00:00.001Z'],
    ['date-times with milliseconds', U, { startDate: '2026-04-10T23:50:00.123Z', endDate: '2026-04-10T23:59:59.999Z' }, '2026-04-10T23:50:00.123Z/2026-04-11T00:00:00Z'],
    ['date-times without offset are local wall clock', S, { startDate: '2026-03-28T23:30:00', endDate: '2026-03-29T03:30' }, '2026-03-28T23:30:00+01:00/2026-03-29T03:30:00.001+02:00'],
    ['a space instead of T', S, { startDate: '2026-03-28 23:30:00', endDate: '2026-03-29 03:30:00' }, '2026-03-28T23:30:00+01:00/2026-03-29T03:30:00.001+02:00'],
    ['only startDate: the end comes from the default 7d', S, { startDate: '2026-04-10' }, '2026-04-10T00:00:00+02:00/2026-04-16T00:00:00+02:00'],
    ['only startDate: the end comes from range', U, { startDate: '2026-04-14T12:00:00Z', range: 'lastHour' }, '2026-04-14T12:00:00Z/2026-04-14T22:38:00Z'],
    ['only endDate: the start comes from range', S, { endDate: '2026-04-01', range: '30d' }, '2026-03-16T00:00:00+01:00/2026-04-02T00:00:00+02:00'],
    ['only endDate: the start comes from the default 7d', U, { endDate: '2026-04-10' }, '2026-04-07T00:00:00Z/2026-04-11T00:00:00Z'],
    ['range with both dates: the dates win', U, { startDate: '2026-04-01', endDate: '2026-04-02', range: 'lastYear' }, '2026-04-01T00:00:00Z/2026-04-03T00:00:00Z'],
    ['dates read in the override timezone', U, { startDate: '2026-04-12', endDate: '2026-04-12', timezone: 'Asia/Tokyo' }, '2026-04-12T00:00:00+09:00/2026-04-13T00:00:00+09:00'],
    ['exactly five years', U, { startDate: '2021-01-01', endDate: '2025-12-31' }, '2021-01-01T00:00:00Z/2026-01-01T00:00:00Z'],
  ]
  for (const [label, project, query, expected] of cases) {
    it(label, async () => {
      const { range } = await rangeOf(project, { ...(query as object), interval: 'month' })
      expect(range).toBe(expected)
      const [start, end] = expected.split('/') as [string, string]
      const tz = (query as Record<string, string>).timezone ?? (project === S ? 'Europe/Stockholm' : 'UTC')
      const w = windowOf(start, end, tz)
      const pages = await h.get(project, 'pages', { ...(query as object), limit: 1000 })
      expect(pages.body).toEqual(h.data.pages(project, w))
      const metrics = await h.get(project, 'metrics', query)
      expect(metrics.body.metrics).toEqual(h.data.metricValues(project, w))
    })
  }

  it('the end instant is included to the millisecond; the start instant too', async () => {
    const sessions = async (query: Query) => (await h.get(U, 'metrics', query)).body.metrics.total_sessions
    // s-edge-before starts at 23:59:59.999, s-edge-start at 00:00:00.000 on 12 April.
    const upTo = (end: string) => sessions({ startDate: '2026-04-11T23:59:59.990Z', endDate: end })
    expect(await upTo('2026-04-11T23:59:59.998Z')).toBe(h.data.startedIn(U, windowOf('2026-04-11T23:59:59.990Z', '2026-04-11T23:59:59.999Z', 'UTC')).length)
    expect(await upTo('2026-04-11T23:59:59.999Z')).toBe(1 + (await upTo('2026-04-11T23:59:59.998Z')))
    expect(await upTo('2026-04-12T00:00:00.000Z')).toBe(2 + (await upTo('2026-04-11T23:59:59.998Z')))
    expect(await sessions({ startDate: '2026-04-12T00:00:00.000Z', endDate: '2026-04-12T00:00:00.000Z' })).toBe(1)
    expect(await sessions({ startDate: '2026-04-12T00:00:00.001Z', endDate: '2026-04-12T00:00:00.001Z' })).toBe(0)
    // A whole day: 11 April contains s-edge-before, not s-edge-start.
    const day = windowOf('2026-04-11T00:00:00Z', '2026-04-12T00:00:00Z', 'UTC')
    expect(h.data.startedIn(U, day).map((s) => s.id)).toContain('s-edge-before')
    expect(h.data.startedIn(U, day).map((s) => s.id)).not.toContain('s-edge-start')
    expect(await sessions({ startDate: '2026-04-11', endDate: '2026-04-11' })).toBe(h.data.startedIn(U, day).length)
  })

  it('start after end is a 400 naming the parameter', async () => {
    await expect400(U, 'metrics', { startDate: '2026-04-12', endDate: '2026-04-11' }, 'startDate')
    await expect400(U, 'pages', { startDate: '2026-04-12T00:00:00Z', endDate: '2026-04-11T23:59:59Z' }, 'startDate')
    // Only one given, and the range's other end is on the wrong side of it.
    await expect400(U, 'metrics', { startDate: '2026-05-01' }, 'startDate')
    await expect400(U, 'country', { endDate: '2026-01-01', range: '7d' }, 'endDate')
  })

  it('unparseable dates are a 400 naming the parameter', async () => {
    for (const bad of ['yesterday', '2026-13-01', '2026-02-30', '2026-04-10T25:00:00Z', '10/04/2026', '2026-04', '', '2026-04-10Tfoo', '1776204000']) {
      await expect400(U, 'metrics', { startDate: bad, endDate: '2026-04-20' }, 'startDate')
      await expect400(U, 'pages', { startDate: '2026-04-01', endDate: bad }, 'endDate')
    }
  })

  it('one 400 names every bad window parameter, not only the first', async () => {
    const res = await h.get(U, 'metrics', { range: 'nope', startDate: 'garbage', endDate: '2026-02-30', timezone: 'Mars/Olympus' })
    expect(res.status).toBe(400)
    expect(new Set(res.body.details.map((d: { path: string }) => d.path))).toEqual(new Set(['range', 'startDate', 'endDate', 'timezone']))
  })

  it('spans over five years are a 400', async () => {
    await expect400(U, 'metrics', { startDate: '2020-01-01', endDate: '2026-01-01' }, 'startDate')
    await expect400(U, 'city', { startDate: '2000-01-01T00:00:00Z', endDate: '2026-01-01T00:00:00Z' }, 'startDate')
  })
})

// ---------------------------------------------------------------------------------------------

describe('filters', () => {
  const W: Window = windowOf('2026-03-15T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC')
  const q = (filters: Filter[], extra: Record<string, string> = {}) => ({ range: '30d', limit: 1000, ...extra, filters })

  async function expectFiltered(filters: Filter[], label = JSON.stringify(filters)) {
    const metrics = await h.get(U, 'metrics', { range: '30d', filters })
    expect(metrics.status, `${label}: ${JSON.stringify(metrics.body)}`).toBe(200)
    expect(metrics.body, label).toEqual(h.data.metrics(U, W, 'day', filters))
    const pages = await h.get(U, 'pages', q(filters))
    expect(pages.body, label).toEqual(h.data.pages(U, W, filters))
    const browser = await h.get(U, 'browser_version', q(filters))
    expect(browser.body, label).toEqual(h.data.breakdown(U, 'browser_version', W, filters))
    return { metrics: metrics.body.metrics, pages: pages.body }
  }

  const all = () => h.data.startedIn(U, W).length

  const CASES: [string, Filter[]][] = [
    // Session attributes, by the session's first event.
    ['is', [{ name: 'country', operator: 'is', value: ['SE'] }]],
    ['is, several values OR', [{ name: 'country', operator: 'is', value: ['SE', 'US'] }]],
    ['isNot, several values AND', [{ name: 'country', operator: 'isNot', value: ['SE', 'US'] }]],
    ['isNull', [{ name: 'country', operator: 'isNull', value: [] }]],
    ['isNotNull (values ignored)', [{ name: 'referrer_name', operator: 'isNotNull', value: ['whatever'] }]],
    ['contains', [{ name: 'city', operator: 'contains', value: ['ar'] }]],
    ['doesNotContain, several values AND', [{ name: 'city', operator: 'doesNotContain', value: ['Paris', 'Berlin'] }]],
    ['contains the empty string: everything, empty values too', [{ name: 'country', operator: 'contains', value: ['', 'zz'] }]],
    ['startsWith (non-ASCII)', [{ name: 'region', operator: 'startsWith', value: ['Île', 'Tex'] }]],
    ['endsWith', [{ name: 'city', operator: 'endsWith', value: ['holm', 'ö'] }]],
    ['regex', [{ name: 'browser', operator: 'regex', value: ['^(Chrome|Safari)$'] }]],
    ['numbers as values of a string attribute', [{ name: 'os_version', operator: 'is', value: [14] }]],
    ['utm_campaign is, with % and _', [{ name: 'utm_campaign', operator: 'is', value: ['100%_off'] }]],
    ['utm_campaign contains %_ literally', [{ name: 'utm_campaign', operator: 'contains', value: ['%_'] }]],
    ['utm_term contains _ literally', [{ name: 'utm_term', operator: 'contains', value: ['_'] }]],
    ['utm_source startsWith a quote', [{ name: 'utm_source', operator: 'startsWith', value: ["o'"] }]],
    ['utm_source isNot', [{ name: 'utm_source', operator: 'isNot', value: ['google'] }]],
    ['referrer_type is', [{ name: 'referrer_type', operator: 'is', value: ['social'] }]],
    ['browser_version gt (numeric text)', [{ name: 'browser_version', operator: 'gt', value: ['100'] }]],
    // Event attributes: sessions with at least one matching event; on /pages the matching views.
    ['path is', [{ name: 'path', operator: 'is', value: ['/pricing'] }]],
    ['path startsWith', [{ name: 'path', operator: 'startsWith', value: ['/docs'] }]],
    ['path contains %_ literally', [{ name: 'path', operator: 'contains', value: ['%_'] }]],
    ['path endsWith a double quote', [{ name: 'path', operator: 'endsWith', value: ['"quoted"'] }]],
    ['path is a backslash path', [{ name: 'path', operator: 'is', value: ['/a\\b'] }]],
    ['path regex', [{ name: 'path', operator: 'regex', value: ['^/blog/.+'] }]],
    ['path doesNotContain, AND', [{ name: 'path', operator: 'doesNotContain', value: ['/docs', '/blog'] }]],
    ['path isNull', [{ name: 'path', operator: 'isNull', value: [] }]],
    ['origin is', [{ name: 'origin', operator: 'is', value: ['https://app.example.com'] }]],
    ['name is revenue', [{ name: 'name', operator: 'is', value: ['revenue'] }]],
    ['name isNot, AND', [{ name: 'name', operator: 'isNot', value: ['screen_view', 'click'] }]],
    ['camelCase column alias', [{ name: 'deviceId', operator: 'is', value: ['dev-weird', 'dev-look'] }]],
    ['camelCase alias of a session attribute is the session attribute', [{ name: 'referrerName', operator: 'is', value: ['Twitter'] }]],
    ['properties: % and _ in key and value', [{ name: `properties.${WEIRD.percentKey}`, operator: 'is', value: [WEIRD.percentValue] }]],
    ['properties: contains % literally', [{ name: `properties.${WEIRD.percentKey}`, operator: 'contains', value: ['%'] }]],
    ['properties: quotes in key and value', [{ name: `properties.${WEIRD.quoteKey}`, operator: 'is', value: [WEIRD.quoteValue] }]],
    ['properties: regex with a quote', [{ name: `properties.${WEIRD.quoteKey}`, operator: 'regex', value: ["^O'Reilly \"b"] }]],
    ['properties: backslashes in key and value', [{ name: `properties.${WEIRD.backslashKey}`, operator: 'is', value: [WEIRD.backslashValue] }]],
    ['properties: non-ASCII key and value', [{ name: `properties.${WEIRD.unicodeKey}`, operator: 'startsWith', value: ['smörg', 'vä'] }]],
    ['properties: _ is not a wildcard', [{ name: 'properties.plan', operator: 'is', value: ['a_b'] }]],
    ['properties: endsWith _b', [{ name: 'properties.plan', operator: 'endsWith', value: ['_b'] }]],
    ['properties: isNull (missing key)', [{ name: 'properties.plan', operator: 'isNull', value: [] }]],
    ['properties: isNotNull', [{ name: 'properties.plan', operator: 'isNotNull', value: [] }]],
    ['properties: title', [{ name: 'properties.__title', operator: 'is', value: ['Pricing'] }]],
    ['properties: gt on numeric text (non-numbers never match)', [{ name: 'properties.price', operator: 'gt', value: ['10'] }]],
    ['properties: lte with a number value', [{ name: 'properties.price', operator: 'lte', value: [7.77] }]],
    ['properties: gte, several values OR', [{ name: 'properties.price', operator: 'gte', value: ['99', '12'] }]],
    ['properties: lt', [{ name: 'properties.price', operator: 'lt', value: ['6'] }]],
    ['revenue gte (numeric column)', [{ name: 'revenue', operator: 'gte', value: ['1000'] }]],
    ['revenue gt', [{ name: 'revenue', operator: 'gt', value: [4999] }]],
    ['revenue is', [{ name: 'revenue', operator: 'is', value: ['777', 4999] }]],
    ['duration lt (every event)', [{ name: 'duration', operator: 'lt', value: ['1'] }]],
    ['created_at gte (a date-time column)', [{ name: 'created_at', operator: 'gte', value: ['2026-04-12T00:00:00.000Z'] }]],
    ['created_at lt, several values OR', [{ name: 'createdAt', operator: 'lt', value: ['2026-03-20T00:00:00Z', '2026-03-18T12:00:00Z'] }]],
    ['created_at is an exact instant', [{ name: 'created_at', operator: 'is', value: ['2026-04-12T00:00:00.000Z', '2026-04-11T23:59:59.999Z'] }]],
    ['id is (a UUID column)', [{ name: 'id', operator: 'is', value: [eventId(2)] }]],
    ['profile_id is the identified visitor (a later event)', [{ name: 'profile_id', operator: 'is', value: ['user-42'] }]],
    // Several filters AND, across kinds.
    ['session AND event attribute', [
      { name: 'country', operator: 'is', value: ['SE'] },
      { name: 'path', operator: 'is', value: ['/pricing'] },
    ]],
    ['two event attributes, matched by different events of one session', [
      { name: 'path', operator: 'is', value: ['/docs'] },
      { name: 'name', operator: 'is', value: ['revenue'] },
    ]],
    ['three filters', [
      { name: 'device', operator: 'isNot', value: ['mobile'] },
      { name: 'utm_source', operator: 'isNotNull', value: [] },
      { name: 'properties.plan', operator: 'isNotNull', value: [] },
    ]],
    // OpenPanel: an empty value list is no filter at all.
    ['an empty value list is ignored', [{ name: 'country', operator: 'is', value: [] }]],
  ]

  for (const [label, filters] of CASES) {
    it(label, async () => {
      const { metrics } = await expectFiltered(filters, label)
      // Each case must actually select something, and (but for the no-op ones) not everything.
      expect(metrics.total_sessions + metrics.total_revenue, `${label} selects nothing`).toBeGreaterThan(0)
      const everything = ['duration lt (every event)', 'path isNull', 'contains the empty string: everything, empty values too']
      if (effective(filters).length > 0 && !everything.includes(label)) {
        expect(metrics.total_sessions, `${label} selects everything`).toBeLessThan(all())
      }
    })
  }

  it('OpenPanel conventions: a column regex written /…/ loses its slashes, a property regex keeps them; null is the text null', async () => {
    const same = async (sent: Filter[], meant: Filter[]) => {
      const res = await h.get(U, 'metrics', { range: '30d', filters: sent })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body, JSON.stringify(sent)).toEqual(h.data.metrics(U, W, 'day', meant))
      return res.body.metrics.total_sessions as number
    }
    const blog = await same([{ name: 'path', operator: 'regex', value: ['/^/blog/.+/'] }], [{ name: 'path', operator: 'regex', value: ['^/blog/.+'] }])
    expect(blog).toBeGreaterThan(0)
    await same([{ name: 'properties.plan', operator: 'regex', value: ['/a/'] }], [{ name: 'properties.plan', operator: 'regex', value: ['/a/'] }])
    await same([{ name: 'country', operator: 'is', value: [null as unknown as string, 'SE'] }], [{ name: 'country', operator: 'is', value: ['null', 'SE'] }])
  })

  it('cohort operators are a 400 that says cohorts are not supported', async () => {
    for (const operator of ['inCohort', 'notInCohort']) {
      const res = await expect400(U, 'metrics', { filters: [{ name: 'profile_id', operator, value: ['c1'] }] as unknown as Filter[] }, 'filters.0.operator')
      expect(JSON.stringify(res.body.details)).toContain('cohorts are not supported')
    }
  })

  it('by hand: % and _ are literal, not LIKE wildcards', async () => {
    const ids = (filters: Filter[]) => h.data.startedIn(U, W, filters).map((s) => s.id)
    expect(ids([{ name: 'utm_campaign', operator: 'contains', value: ['%_'] }])).toEqual(['s-weird'])
    expect(ids([{ name: `properties.${WEIRD.percentKey}`, operator: 'is', value: [WEIRD.percentValue] }])).toEqual(['s-weird'])
    const res = await h.get(U, 'metrics', { range: '30d', filters: [{ name: 'utm_campaign', operator: 'contains', value: ['%_'] }] })
    expect(res.body.metrics).toMatchObject({ total_sessions: 1, unique_visitors: 1, total_screen_views: 4, bounce_rate: 0, avg_session_duration: 80, views_per_session: 4, total_revenue: 777 })
    const plan = await h.get(U, 'pages', q([{ name: 'properties.plan', operator: 'is', value: ['a_b'] }]))
    // s-weird's view of /søk/日本 has plan a_b; s-lookalike's plan a1b must not match.
    expect(plan.body.map((r: { path: string }) => r.path)).toContain('/søk/日本')
    expect(plan.body.map((r: { path: string }) => r.path)).not.toContain('/blog/100 and more off')
  })

  it('by hand: a session identified mid-way is found by its later profile id, and counted by its first', async () => {
    const res = await h.get(U, 'metrics', { range: '30d', filters: [{ name: 'profile_id', operator: 'is', value: ['user-42'] }] })
    expect(res.body.metrics).toMatchObject({ total_sessions: 1, unique_visitors: 1, total_screen_views: 3, total_revenue: 1500 })
    const pages = await h.get(U, 'pages', q([{ name: 'profile_id', operator: 'is', value: ['user-42'] }]))
    // Only the view after identifying carries user-42.
    expect(pages.body).toEqual([expect.objectContaining({ path: '/welcome', sessions: 1, visitors: 1, pageviews: 1, avg_duration: 20 })])
    expect(h.data.sessions.get(`${U}\u0000s-identify`)?.profile_id).toBe('dev-ident')
  })

  it('by hand: on /pages a session filter keeps the views of sessions begun before the window', async () => {
    // s-midnight (SE, from 23:50 on the 10th) viewed /docs at 00:10 on the 11th.
    const query = { startDate: '2026-04-11T00:00:00Z', endDate: '2026-04-11T00:20:00Z', limit: 1000, filters: [{ name: 'city', operator: 'is', value: ['Stockholm'] }] as Filter[] }
    const res = await h.get(U, 'pages', query)
    const w = windowOf('2026-04-11T00:00:00Z', '2026-04-11T00:20:00.001Z', 'UTC')
    expect(res.body).toEqual(h.data.pages(U, w, query.filters))
    expect(res.body).toContainEqual({ origin: 'https://example.com', path: '/docs', title: 'Docs', sessions: 1, visitors: 1, pageviews: 1, bounce_rate: 0, avg_duration: 120.25 })
  })

  it('by hand: on /pages an event filter keeps the matching views only', async () => {
    const res = await h.get(U, 'pages', q([{ name: 'path', operator: 'is', value: ['/pricing'] }]))
    expect(res.body).toHaveLength(1)
    expect(res.body[0]).toMatchObject({ origin: 'https://example.com', path: '/pricing', title: 'Pricing' })
  })

  it('by hand: a session attribute is the first event’s (s-firstattr is DE/Firefox, not US/Safari)', async () => {
    const window = { startDate: '2026-04-13T07:00:00Z', endDate: '2026-04-13T07:00:00Z' }
    const de = await h.get(U, 'metrics', { ...window, filters: [{ name: 'country', operator: 'is', value: ['DE'] }] })
    expect(de.body.metrics.total_sessions).toBe(1)
    const us = await h.get(U, 'metrics', { ...window, filters: [{ name: 'country', operator: 'is', value: ['US'] }] })
    expect(us.body.metrics.total_sessions).toBe(0)
    const hn = await h.get(U, 'metrics', { ...window, filters: [{ name: 'utm_source', operator: 'is', value: ['twitter'] }] })
    expect(hn.body.metrics.total_sessions).toBe(0)
    // …while its later events' values still match as event properties.
    const tw = await h.get(U, 'metrics', { ...window, filters: [{ name: 'properties.__query.utm_source', operator: 'is', value: ['twitter'] }] })
    expect(tw.body.metrics.total_sessions).toBe(1)
  })

  it('filters on a Stockholm window across DST', async () => {
    const w = windowOf('2026-03-27T00:00:00+01:00', '2026-04-02T00:00:00+02:00', 'Europe/Stockholm')
    const filters: Filter[] = [
      { name: 'country', operator: 'is', value: ['SE'] },
      { name: 'path', operator: 'startsWith', value: ['/pri'] },
    ]
    const query = { startDate: '2026-03-27', endDate: '2026-04-01', filters }
    expect((await h.get(S, 'metrics', query)).body).toEqual(h.data.metrics(S, w, 'day', filters))
    expect((await h.get(S, 'pages', { ...query, limit: 1000 })).body).toEqual(h.data.pages(S, w, filters))
    expect((await h.get(S, 'entry_page', { ...query, limit: 1000 })).body).toEqual(h.data.breakdown(S, 'entry_page', w, filters))
  })

  it('bracket notation equals the JSON array', async () => {
    const filters: Filter[] = [
      { name: 'country', operator: 'is', value: ['SE', 'US'] },
      { name: `properties.${WEIRD.quoteKey}`, operator: 'isNotNull', value: [] },
    ]
    const bracket = new URLSearchParams([
      ['range', '30d'],
      ['limit', '1000'],
      ['filters[0][name]', 'country'],
      ['filters[0][operator]', 'is'],
      ['filters[0][value][0]', 'SE'],
      ['filters[0][value][1]', 'US'],
      ['filters[1][name]', `properties.${WEIRD.quoteKey}`],
      ['filters[1][operator]', 'isNotNull'],
    ]).toString()
    const json = await h.get(U, 'country', q(filters))
    const viaBrackets = await h.get(U, 'country', bracket)
    expect(viaBrackets.status, JSON.stringify(viaBrackets.body)).toBe(200)
    expect(viaBrackets.body).toEqual(json.body)
    expect(json.body).toEqual(h.data.breakdown(U, 'country', W, filters))
    // filters[0][value][]=… appends.
    const appended = new URLSearchParams([
      ['range', '30d'],
      ['filters[0][name]', 'country'],
      ['filters[0][operator]', 'isNot'],
      ['filters[0][value][]', 'SE'],
      ['filters[0][value][]', 'US'],
    ]).toString()
    const res = await h.get(U, 'metrics', appended)
    expect(res.body.metrics).toEqual(h.data.metricValues(U, W, [{ name: 'country', operator: 'isNot', value: ['SE', 'US'] }]))
  })

  it('an OpenPanel filter id is accepted and ignored', async () => {
    const res = await h.get(U, 'metrics', { range: '30d', filters: [{ id: 'x1', name: 'country', operator: 'is', value: ['SE'] } as Filter] })
    expect(res.status).toBe(200)
    expect(res.body.metrics).toEqual(h.data.metricValues(U, W, [{ name: 'country', operator: 'is', value: ['SE'] }]))
  })

  it('inCohort, notInCohort and unknown operators are a 400 naming the filter', async () => {
    for (const operator of ['inCohort', 'notInCohort', 'like', 'IS']) {
      await expect400(U, 'metrics', { filters: [{ name: 'country', operator, value: ['x'] }] }, 'filters.0.operator')
    }
  })

  it('unknown names are a 400 naming the filter', async () => {
    for (const name of ['nonexistent', 'properties.', 'profile.shoe_size', 'profile.properties.', 'entry_page', 'cohort', '']) {
      const res = await h.get(U, 'pages', { filters: [{ name: 'country', operator: 'is', value: ['SE'] }, { name, operator: 'is', value: ['x'] }] })
      expect(res.status, name).toBe(400)
      expect(detailPaths(res.body).some((p) => p.startsWith('filters.1')), `${name}: ${JSON.stringify(res.body)}`).toBe(true)
    }
  })

  it('numeric comparisons with non-numeric values are a 400', async () => {
    await expect400(U, 'metrics', { filters: [{ name: 'properties.price', operator: 'gt', value: ['abc'] }] }, 'filters.0.value')
    await expect400(U, 'pages', { filters: [{ name: 'revenue', operator: 'lte', value: ['10', 'ten'] }] }, 'filters.0.value')
    await expect400(U, 'country', { filters: [{ name: 'revenue', operator: 'is', value: ['free'] }] }, 'filters.0.value')
    await expect400(U, 'metrics', { filters: [{ name: 'country', operator: 'gte', value: [''] }] }, 'filters.0.value')
  })

  it('doesNotContain the empty string: nothing', async () => {
    const filters: Filter[] = [{ name: 'path', operator: 'doesNotContain', value: ['x', ''] }]
    const res = await h.get(U, 'metrics', { range: '30d', filters })
    expect(res.body).toEqual(h.data.metrics(U, W, 'day', filters))
    expect(res.body.metrics.total_sessions).toBe(0)
    const city = await h.get(U, 'city', q([{ name: 'city', operator: 'contains', value: [''] }]))
    expect(city.body).toEqual(h.data.breakdown(U, 'city', W))
  })

  it('a numeric comparison on the UUID column compares its text (never a 500)', async () => {
    const filters: Filter[] = [{ name: 'id', operator: 'gt', value: ['1'] }]
    for (const route of ['metrics', 'pages', 'country']) {
      const res = await h.get(U, route, { range: '30d', filters })
      expect(res.status, `${route}: ${JSON.stringify(res.body)}`).toBe(200)
    }
    expect((await h.get(U, 'metrics', { range: '30d', filters })).body).toEqual(h.data.metrics(U, W, 'day', filters))
  })

  it('an invalid regular expression is a 400, not a 500', async () => {
    const res = await h.get(U, 'metrics', { filters: [{ name: 'path', operator: 'regex', value: ['('] }] })
    expect(res.status).toBe(400)
  })

  it('malformed filters are a 400 naming filters', async () => {
    await expect400(U, 'metrics', 'filters=%5B%7B', 'filters')
    await expect400(U, 'metrics', { filters: '{"name":"country"}' as unknown as Filter[] }, 'filters')
    await expect400(U, 'metrics', 'filters=country', 'filters')
    // Missing value, and both notations at once.
    const noValue = await h.get(U, 'metrics', { filters: JSON.stringify([{ name: 'country', operator: 'is' }]) as unknown as Filter[] })
    expect(noValue.status).toBe(400)
    const both = `filters=${encodeURIComponent('[]')}&filters[0][name]=country&filters[0][operator]=is&filters[0][value][0]=SE`
    await expect400(U, 'metrics', both, 'filters')
  })
})

// ---------------------------------------------------------------------------------------------

describe('unknown parameters', () => {
  const cases: [string, string, string][] = [
    ['metrics', 'foo=1', 'foo'],
    ['metrics', 'Range=7d', 'Range'],
    ['metrics', 'start_date=2026-04-01', 'start_date'],
    ['metrics', 'limits=10', 'limits'],
    ['pages', 'interval=day', 'interval'],
    ['pages', 'previous=true', 'previous'],
    ['country', 'filter=x', 'filter'],
    ['country', 'range=7d&range=30d&utm=1', 'utm'],
    ['live', 'startDate=2026-04-01', 'startDate'],
  ]
  for (const [route, qs, path] of cases) {
    it(`${route}?${qs} is a 400 naming ${path}`, async () => {
      await expect400(U, route, qs, path)
    })
  }

  it('a request without parameters is valid on every route', async () => {
    for (const route of ['metrics', 'live', 'pages', 'referrer', 'city', 'exit_page']) {
      expect((await h.get(U, route)).status, route).toBe(200)
    }
  })

  it('previous accepts only true and false', async () => {
    await expect400(U, 'metrics', { previous: 'yes' }, 'previous')
  })
})
