/**
 * /pages and every dimension route against the reference model, their pagination (cursors, Link,
 * page numbers, pinned windows, tampering), and the separation of projects.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROJECTS } from './fixtures/insights-data.ts'
import { openInsights, type Harness, type Query } from './fixtures/insights-harness.ts'
import { DIMENSION_NAMES, windowOf, type Window } from './fixtures/insights-model.ts'

let h: Harness
beforeAll(async () => {
  h = await openInsights()
})
afterAll(async () => {
  await h?.dispose()
})

const U = PROJECTS.utc.id
const S = PROJECTS.sthlm.id
const O = PROJECTS.other.id

const UTC_7D = windowOf('2026-04-07T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC')
const UTC_30D = windowOf('2026-03-15T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC')
const STHLM_DST = windowOf('2026-03-27T00:00:00+01:00', '2026-04-02T00:00:00+02:00', 'Europe/Stockholm')
const STHLM_30D = windowOf('2026-03-16T00:00:00+01:00', '2026-04-16T00:00:00+02:00', 'Europe/Stockholm')

const WINDOWS: [string, string, Query, Window][] = [
  ['UTC 7d (default range)', U, {}, UTC_7D],
  ['UTC 30d', U, { range: '30d' }, UTC_30D],
  ['UTC one day (session across midnight)', U, { startDate: '2026-04-11', endDate: '2026-04-11' }, windowOf('2026-04-11T00:00:00Z', '2026-04-12T00:00:00Z', 'UTC')],
  ['Stockholm over DST', S, { startDate: '2026-03-27', endDate: '2026-04-01' }, STHLM_DST],
  ['Stockholm 30d', S, { range: '30d' }, STHLM_30D],
]

describe('pages', () => {
  for (const [label, project, query, w] of WINDOWS) {
    it(label, async () => {
      const res = await h.get(project, 'pages', { ...(query as object), limit: 1000 })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body).toEqual(h.data.pages(project, w))
      expect(res.headers.get('x-next-cursor')).toBeNull()
      expect(res.headers.get('link')).toBeNull()
    })
  }

  it('the fixture exercises titles, ties, bounces and time on page', () => {
    const rows = h.data.pages(U, UTC_30D)
    expect(rows.length).toBeGreaterThan(12)
    expect(rows.some((r) => r.title === '')).toBe(true)
    expect(rows.some((r) => r.bounce_rate > 0 && r.bounce_rate < 100)).toBe(true)
    expect(rows.some((r) => r.avg_duration > 0)).toBe(true)
    const counts = rows.map((r) => r.sessions)
    expect(new Set(counts).size).toBeLessThan(counts.length) // ties to break
  })

  it('by hand: the weird pages of one session', async () => {
    const res = await h.get(U, 'pages', { startDate: '2026-04-13T11:11:11.111Z', endDate: '2026-04-13T11:12:40Z', limit: 1000 })
    expect(res.status).toBe(200)
    const mine = res.body.filter((r: { path: string }) => ['/blog/100%_off', "/blog/it's \"quoted\"", '/søk/日本', '/a\\b'].includes(r.path))
    expect(mine).toEqual(
      expect.arrayContaining([
        // s-weird enters here (a session of four views, so no bounce) and stays 12 s.
        expect.objectContaining({ path: '/blog/100%_off', title: '100% "off"', avg_duration: 12 }),
        expect.objectContaining({ path: "/blog/it's \"quoted\"", title: "It's", avg_duration: 28 }),
        expect.objectContaining({ path: '/søk/日本', title: '日本', avg_duration: 35 }),
        // The last view is followed by the revenue event 5 s later.
        expect.objectContaining({ path: '/a\\b', title: 'Back\\slash', avg_duration: 5, bounce_rate: 0 }),
      ]),
    )
  })

  it('by hand: the long session, its titles and the time on each page', async () => {
    const res = await h.get(U, 'pages', { startDate: '2026-04-09T08:00:00Z', endDate: '2026-04-09T10:59:59Z', limit: 1000 })
    expect(res.body).toEqual(h.data.pages(U, windowOf('2026-04-09T08:00:00Z', '2026-04-09T10:59:59.001Z', 'UTC')))
    // Only s-long's views from 08:00 to 10:00 are in [08:00, 08:00:00.001) … no: narrow to its own instants.
    const intro = await h.get(U, 'pages', { startDate: '2026-04-09T08:10:00Z', endDate: '2026-04-09T09:00:00Z', limit: 1000 })
    const row = intro.body.find((r: { path: string }) => r.path === '/docs/intro')
    // Views at +600 s and +3600 s, followed 3000 s and 1800 s later; titles Intro and Introduction tie 1:1.
    expect(row).toMatchObject({ pageviews: 2, sessions: 1, title: 'Intro', avg_duration: 2400, bounce_rate: 0 })
  })
})

describe('dimensions', () => {
  it('the registry serves exactly the dimensions of the issue', () => {
    expect(DIMENSION_NAMES.sort()).toEqual(
      [
        'referrer',
        'referrer_name',
        'referrer_type',
        'utm_source',
        'utm_medium',
        'utm_campaign',
        'utm_term',
        'utm_content',
        'country',
        'region',
        'city',
        'device',
        'brand',
        'model',
        'browser',
        'browser_version',
        'os',
        'os_version',
        'entry_page',
        'exit_page',
      ].sort(),
    )
  })

  for (const dimension of DIMENSION_NAMES) {
    it(dimension, async () => {
      for (const [label, project, query, w] of WINDOWS) {
        const res = await h.get(project, dimension, { ...(query as object), limit: 1000 })
        expect(res.status, `${label}: ${JSON.stringify(res.body)}`).toBe(200)
        expect(res.body, label).toEqual(h.data.breakdown(project, dimension, w))
      }
    })
  }

  it('empty values come back as null names, ranked last among ties', async () => {
    const res = await h.get(U, 'referrer_name', { range: '30d', limit: 1000 })
    expect(res.body.some((r: { name: string | null }) => r.name === null)).toBe(true)
    const city = await h.get(U, 'city', { range: '30d', limit: 1000 })
    // Paris in France and Paris in Texas are different rows.
    const paris = city.body.filter((r: { name: string | null }) => r.name === 'Paris').map((r: { prefix: string }) => r.prefix)
    expect(paris.sort()).toEqual(['FR', 'US'])
    expect(city.body.some((r: { name: null; prefix: null }) => r.name === null && r.prefix === null)).toBe(true)
    expect(city.body.some((r: { name: null; prefix: string }) => r.name === null && r.prefix === 'US')).toBe(true)
  })

  it('by hand: first-event attributes and the session without page views', async () => {
    const day = { startDate: '2026-04-13T07:00:00Z', endDate: '2026-04-13T07:00:00Z', limit: 1000 }
    const country = await h.get(U, 'country', day)
    const w = windowOf('2026-04-13T07:00:00Z', '2026-04-13T07:00:00.001Z', 'UTC')
    expect(country.body).toEqual(h.data.breakdown(U, 'country', w))
    // s-firstattr is German by its first event, although later events say US.
    expect(country.body.find((r: { name: string }) => r.name === 'DE')).toMatchObject({ sessions: 1, pageviews: 3, bounce_rate: 0, avg_session_duration: 95 })
    expect(country.body.find((r: { name: string }) => r.name === 'US')).toBeUndefined()
    const source = await h.get(U, 'utm_source', day)
    expect(source.body.find((r: { name: string }) => r.name === 'hn')).toMatchObject({ sessions: 1 })
    expect(source.body.find((r: { name: string }) => r.name === 'twitter')).toBeUndefined()

    const noview = { startDate: '2026-04-12T15:00:00Z', endDate: '2026-04-12T15:00:00Z', limit: 1000 }
    const entry = await h.get(U, 'entry_page', noview)
    expect(entry.body).toEqual([
      { name: null, prefix: null, sessions: 1, visitors: 1, pageviews: 0, bounce_rate: 100, avg_session_duration: 30, revenue: 0 },
    ])
  })

  it('by hand: a session whose first event is not a page view', async () => {
    const q = { startDate: '2026-04-08T06:00:00Z', endDate: '2026-04-08T06:00:00Z', limit: 1000 }
    const row = { sessions: 1, visitors: 1, pageviews: 2, bounce_rate: 0, avg_session_duration: 70, revenue: 4200 }
    expect((await h.get(U, 'entry_page', q)).body).toEqual([{ name: '/pricing', prefix: 'https://example.com', ...row }])
    expect((await h.get(U, 'exit_page', q)).body).toEqual([{ name: '/billing', prefix: 'https://app.example.com', ...row }])
    expect((await h.get(U, 'country', q)).body).toEqual([{ name: 'NL', ...row }])
    expect((await h.get(U, 'city', q)).body).toEqual([{ name: 'Amsterdam', prefix: 'NL', ...row }])
    expect((await h.get(U, 'referrer_name', q)).body).toEqual([{ name: 'DuckDuckGo', ...row }])
    expect((await h.get(U, 'utm_source', q)).body).toEqual([{ name: 'ddg', ...row }])
    expect((await h.get(U, 'utm_medium', q)).body).toEqual([{ name: null, ...row }])
  })

  it('by hand: time on page runs to the next event even after the window ends', async () => {
    // s-midnight viewed /pricing at 23:58:00.123; its next event (the purchase) came 420.5 s later, after midnight.
    const res = await h.get(U, 'pages', { startDate: '2026-04-10T23:58:00.123Z', endDate: '2026-04-10T23:58:00.123Z' })
    expect(res.body).toEqual([{ origin: 'https://example.com', path: '/pricing', title: 'Pricing', sessions: 1, visitors: 1, pageviews: 1, bounce_rate: 0, avg_duration: 420.5 }])
    // A view that is its session's last event has no time on page: 0 when it is the only one.
    const bounce = await h.get(U, 'pages', { startDate: '2026-04-10T12:00:00Z', endDate: '2026-04-10T12:00:00Z' })
    expect(bounce.body).toEqual([{ origin: 'https://example.com', path: '/pricing', title: 'Pricing', sessions: 1, visitors: 1, pageviews: 1, bounce_rate: 100, avg_duration: 0 }])
  })

  it('by hand: the midnight session (entry /, exit /docs, revenue 49.99 as 4999)', async () => {
    const q = { startDate: '2026-04-10T23:50:00.123Z', endDate: '2026-04-10T23:50:00.123Z', limit: 1000 }
    const entry = await h.get(U, 'entry_page', q)
    expect(entry.body).toEqual([
      { name: '/', prefix: 'https://example.com', sessions: 1, visitors: 1, pageviews: 3, bounce_rate: 0, avg_session_duration: 1320.25, revenue: 4999 },
    ])
    const exit = await h.get(U, 'exit_page', q)
    expect(exit.body[0]).toMatchObject({ name: '/docs', prefix: 'https://example.com' })
  })
})

describe('pagination', () => {
  const routes: [string, string, Query][] = [
    ['pages', U, { range: '30d' }],
    ['city', U, { range: '30d' }],
    ['browser_version', S, { range: '30d' }],
    ['entry_page', U, { range: '30d' }],
    ['referrer', U, { range: '30d' }],
  ]

  for (const [route, project, query] of routes) {
    it(`${route}: following Link page by page equals the unpaged ranking`, async () => {
      const all = await h.get(project, route, { ...(query as object), limit: 1000 })
      expect(all.body.length).toBeGreaterThan(3)
      for (const limit of route === 'pages' ? [3, 7] : [1, 2]) {
        const seen: unknown[] = []
        let res = await h.get(project, route, { ...(query as object), limit })
        for (let page = 0; ; page++) {
          expect(res.status, JSON.stringify(res.body)).toBe(200)
          expect(res.body.length).toBeLessThanOrEqual(limit)
          seen.push(...res.body)
          const link = res.headers.get('link')
          const cursor = res.headers.get('x-next-cursor')
          if (seen.length >= all.body.length) {
            expect(link, 'no next page after the last').toBeNull()
            expect(cursor).toBeNull()
            break
          }
          expect(cursor).toBeTruthy()
          const match = /^<([^>]+)>; rel="next"$/.exec(link ?? '')
          expect(match, `Link: ${link}`).not.toBeNull()
          const next = new URL(match![1]!)
          expect(next.searchParams.get('cursor')).toBe(cursor)
          expect(next.searchParams.get('limit')).toBe(String(limit))
          // Alternate between the Link URL and the cursor on the original request.
          res = page % 2 === 0 ? await h.fetch(next.toString()) : await h.get(project, route, { ...(query as object), limit, cursor: cursor! })
          expect(page).toBeLessThan(all.body.length)
        }
        expect(seen).toEqual(all.body)
        expect(new Set(seen.map((r) => JSON.stringify(r))).size).toBe(seen.length)
      }
    })
  }

  it('the Link URL keeps bracket-notation filters and the timezone', async () => {
    const filters = [{ name: 'path', operator: 'startsWith', value: ['/', 'x'] }]
    const qs = new URLSearchParams([
      ['range', '30d'],
      ['timezone', 'Asia/Tokyo'],
      ['limit', '2'],
      ['filters[0][name]', 'path'],
      ['filters[0][operator]', 'startsWith'],
      ['filters[0][value][0]', '/'],
      ['filters[0][value][1]', 'x'],
    ]).toString()
    const w = windowOf('2026-03-16T00:00:00+09:00', '2026-04-16T00:00:00+09:00', 'Asia/Tokyo')
    const expected = h.data.pages(U, w, filters)
    const seen: unknown[] = []
    let res = await h.get(U, 'pages', qs)
    for (;;) {
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.headers.get('x-quarry-range')).toBe('2026-03-16T00:00:00+09:00/2026-04-16T00:00:00+09:00')
      seen.push(...res.body)
      const link = res.headers.get('link')
      if (!link) break
      res = await h.fetch(/^<([^>]+)>/.exec(link)![1]!)
    }
    expect(seen).toEqual(expected)
  })

  it('default limit is 1000, as OpenPanel answers; a short last page has no next cursor', async () => {
    const all = h.data.breakdown(U, 'city', UTC_30D)
    expect(all.length).toBeGreaterThan(10)
    const first = await h.get(U, 'city', { range: '30d' })
    expect(first.body).toEqual(all.slice(0, 1000))
    expect(first.headers.get('x-next-cursor') !== null).toBe(all.length > 1000)
    const short = await h.get(U, 'city', { range: '30d', limit: 10 })
    expect(short.body).toEqual(all.slice(0, 10))
    expect(short.headers.get('x-next-cursor')).toBeTruthy()
    const exact = await h.get(U, 'city', { range: '30d', limit: all.length })
    expect(exact.body).toEqual(all)
    expect(exact.headers.get('x-next-cursor')).toBeNull()
    expect(exact.headers.get('link')).toBeNull()
  })

  it('a plain integer cursor is a 1-based page number', async () => {
    const all = h.data.pages(U, UTC_30D)
    for (const page of [1, 2, 3]) {
      const res = await h.get(U, 'pages', { range: '30d', limit: 4, cursor: String(page) })
      expect(res.status).toBe(200)
      expect(res.body).toEqual(all.slice((page - 1) * 4, page * 4))
    }
    const beyond = await h.get(U, 'pages', { range: '30d', limit: 4, cursor: '999' })
    expect(beyond.status).toBe(200)
    expect(beyond.body).toEqual([])
    const zero = await h.get(U, 'pages', { range: '30d', limit: 4, cursor: '0' })
    expect(zero.status).toBe(400)
    expect(zero.body.details[0].path).toBe('cursor')
  })

  it('a tampered cursor is a 400', async () => {
    const first = await h.get(U, 'pages', { range: '30d', limit: 2 })
    const cursor = first.headers.get('x-next-cursor')!
    const [body, mac] = cursor.split('.') as [string, string]
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'))
    const forged = Buffer.from(JSON.stringify({ ...payload, o: 0 })).toString('base64url')
    // (Not the last character: its low bits are base64 padding, which decoders ignore.)
    const flipped = (mac.startsWith('A') ? 'B' : 'A') + mac.slice(1)
    for (const bad of [`${forged}.${mac}`, `${body}.${flipped}`, `${body}.`, body, 'not-a-cursor', `${cursor}x`]) {
      const res = await h.get(U, 'pages', { range: '30d', limit: 2, cursor: bad })
      expect(res.status, bad).toBe(400)
      expect(res.body.details[0].path).toBe('cursor')
      expect(res.body.requestId).toBeTruthy()
    }
  })

  it('a cursor used with other parameters is a 400', async () => {
    const first = await h.get(U, 'pages', { range: '30d', limit: 2 })
    const cursor = first.headers.get('x-next-cursor')!
    const variants: [string, Query][] = [
      ['pages', { range: '7d', limit: 2, cursor }],
      ['pages', { range: '30d', limit: 2, cursor, timezone: 'Europe/Stockholm' }],
      ['pages', { range: '30d', limit: 2, cursor, filters: [{ name: 'country', operator: 'is', value: ['SE'] }] }],
      ['pages', { range: '30d', limit: 2, cursor, startDate: '2026-03-16' }],
      ['city', { range: '30d', limit: 2, cursor }],
    ]
    for (const [route, query] of variants) {
      const res = await h.get(U, route, query)
      expect(res.status, `${route} ${JSON.stringify(query)}`).toBe(400)
      expect(res.body.details[0].path).toBe('cursor')
    }
    // Another project with the same parameters: still not this cursor's ranking.
    const elsewhere = await h.get(S, 'pages', { range: '30d', limit: 2, cursor })
    expect(elsewhere.status).toBe(400)
  })

  it('a cursor pins the window: page 2 of range=30min comes from page 1 window', async () => {
    const at = (iso: string) => (h.clock.now = new Date(iso))
    try {
      at('2026-04-14T22:37:12.345Z')
      const first = await h.get(U, 'pages', { range: '30min', limit: 1 })
      expect(first.headers.get('x-quarry-range')).toBe('2026-04-14T22:07:00Z/2026-04-14T22:38:00Z')
      const pinned = windowOf('2026-04-14T22:07:00Z', '2026-04-14T22:38:00Z', 'UTC')
      const all = h.data.pages(U, pinned)
      expect(all.length).toBeGreaterThan(1)
      expect(first.body).toEqual(all.slice(0, 1))
      // Forty minutes later, the same cursor still reads the first page's window.
      at('2026-04-14T23:17:00.000Z')
      const second = await h.get(U, 'pages', { range: '30min', limit: 1, cursor: first.headers.get('x-next-cursor')! })
      expect(second.status).toBe(200)
      expect(second.headers.get('x-quarry-range')).toBe('2026-04-14T22:07:00Z/2026-04-14T22:38:00Z')
      expect(second.body).toEqual(all.slice(1, 2))
      // A fresh first page moves with the clock.
      const fresh = await h.get(U, 'pages', { range: '30min', limit: 1 })
      expect(fresh.headers.get('x-quarry-range')).toBe('2026-04-14T22:47:00Z/2026-04-14T23:18:00Z')
    } finally {
      h.clock.now = new Date('2026-04-14T22:37:12.345Z')
    }
  })

  it('the cursor may be reused with another limit', async () => {
    const all = h.data.breakdown(U, 'city', UTC_30D)
    const first = await h.get(U, 'city', { range: '30d', limit: 3 })
    const res = await h.get(U, 'city', { range: '30d', limit: 5, cursor: first.headers.get('x-next-cursor')! })
    expect(res.status).toBe(200)
    expect(res.body).toEqual(all.slice(3, 8))
  })

  it('limit is 1–1000', async () => {
    for (const limit of ['0', '1001', '-1', '2.5', 'ten', '']) {
      const res = await h.get(U, 'pages', { limit })
      expect(res.status, limit).toBe(400)
      expect(res.body.details[0].path).toBe('limit')
    }
    expect((await h.get(U, 'pages', { limit: '1000' })).status).toBe(200)
    expect((await h.get(U, 'pages', { limit: '1' })).body).toHaveLength(1)
  })
})

describe('projects stay apart', () => {
  it("another organization's project is a 404 for this root client, and its data never leaks", async () => {
    for (const route of ['metrics', 'live', 'pages', 'country']) {
      const res = await h.get(O, route)
      expect(res.status, route).toBe(404)
      expect(res.body.code).toBeTruthy()
    }
  })

  it('a project that does not exist is a 404', async () => {
    const res = await h.get('no-such-project', 'metrics')
    expect(res.status).toBe(404)
    expect(res.body).toMatchObject({ status: 404 })
  })

  it('the other project, read by its own clients, has only its own numbers (same session ids, same pages)', async () => {
    const w = UTC_7D
    for (const as of ['otherRead', 'otherRoot'] as const) {
      const metrics = await h.get(O, 'metrics', {}, as)
      expect(metrics.status).toBe(200)
      expect(metrics.body).toEqual(h.data.metrics(O, w, 'day'))
      const pages = await h.get(O, 'pages', { limit: 1000 }, as)
      expect(pages.body).toEqual(h.data.pages(O, w))
      for (const dimension of ['country', 'utm_source', 'entry_page']) {
        const rows = await h.get(O, dimension, { limit: 1000 }, as)
        expect(rows.body).toEqual(h.data.breakdown(O, dimension, w))
      }
    }
    // And the UTC project's numbers contain none of the other's million-cent purchases.
    const utc = await h.get(U, 'metrics', {})
    expect(utc.body.metrics.total_revenue).toBeLessThan(1_000_000)
  })

  it('a read client reaches only its own project', async () => {
    const own = await h.get(U, 'pages', { limit: 1000 }, 'utcRead')
    expect(own.body).toEqual(h.data.pages(U, UTC_7D))
    const res = await h.get(S, 'pages', {}, 'utcRead')
    expect(res.status).toBe(403)
  })
})
