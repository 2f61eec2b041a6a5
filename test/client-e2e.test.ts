/**
 * Quarry driven the way an integrator would: through a TypeScript client generated from
 * /openapi.json (openapi-typescript types, openapi-fetch calls). `tsc --noEmit` checks every
 * call's path, parameters and result types against the generated file.
 */
import { readFileSync } from 'node:fs'
import createClient from 'openapi-fetch'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DIMENSIONS } from '../src/query/dimensions.ts'
import { GENERATED_CLIENT_PATH, generateClientTypes } from '../scripts/generate-client.ts'
import type { components, paths } from './generated/quarry-api.js'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'
import { credentialHeaders, NOW, seedFixture, type FixtureClients } from './openapi-support.ts'

let rt: TestRuntime
let clients: FixtureClients
let app: ReturnType<typeof testApp>

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000' })
  clients = await seedFixture(rt)
  app = testApp(rt, { now: () => NOW })
})

afterAll(async () => {
  await rt?.dispose()
})

/**
 * The documented way to send arrays of objects (filters, series, breakdowns): URL-encoded JSON.
 * openapi-fetch would otherwise write them as `[object Object]`.
 */
const jsonQuery = (query: Record<string, unknown>) =>
  new URLSearchParams(
    Object.entries(query)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]),
  ).toString()

const quarry = (headers: Record<string, string> = {}) =>
  createClient<paths>({
    baseUrl: 'http://quarry.test',
    fetch: async (req) => app.fetch(req),
    headers,
    querySerializer: jsonQuery,
  })

/** Every breakdown path, spelled out so that tsc checks each one exists in the generated client. */
const DIMENSION_PATHS = [
  '/insights/{projectId}/referrer',
  '/insights/{projectId}/referrer_name',
  '/insights/{projectId}/referrer_type',
  '/insights/{projectId}/utm_source',
  '/insights/{projectId}/utm_medium',
  '/insights/{projectId}/utm_campaign',
  '/insights/{projectId}/utm_term',
  '/insights/{projectId}/utm_content',
  '/insights/{projectId}/country',
  '/insights/{projectId}/region',
  '/insights/{projectId}/city',
  '/insights/{projectId}/device',
  '/insights/{projectId}/brand',
  '/insights/{projectId}/model',
  '/insights/{projectId}/browser',
  '/insights/{projectId}/browser_version',
  '/insights/{projectId}/os',
  '/insights/{projectId}/os_version',
  '/insights/{projectId}/entry_page',
  '/insights/{projectId}/exit_page',
] as const satisfies readonly (keyof paths)[]

type BreakdownRow = components['schemas']['BreakdownRow']
type ExportEvents = components['schemas']['ExportEvents']

/** /export/events documents JSON, NDJSON and CSV bodies for its 200; format=json answers the first. */
function jsonPage(data: ExportEvents | string | undefined): ExportEvents {
  if (data === undefined || typeof data === 'string') throw new Error(`expected a JSON page, got ${String(data).slice(0, 100)}`)
  return data
}

describe('the generated client', () => {
  it('is up to date with /openapi.json (run `npm run generate:client` after changing a schema)', async () => {
    const committed = readFileSync(GENERATED_CLIENT_PATH, 'utf8')
    expect(committed === (await generateClientTypes()), 'test/generated/quarry-api.d.ts is stale: run npm run generate:client').toBe(true)
  })

  it('covers every breakdown of the dimension registry', () => {
    expect(DIMENSION_PATHS.map((p) => p.replace('/insights/{projectId}/', ''))).toEqual(DIMENSIONS.map((d) => d.name))
  })
})

describe('every endpoint through the generated client', () => {
  it('system: /healthz and /readyz', async () => {
    const api = quarry()
    const health = await api.GET('/healthz')
    expect(health.response.status).toBe(200)
    expect(health.data?.status).toBe('ok')
    const ready = await api.GET('/readyz')
    expect(ready.data?.status).toBe('ready')
  })

  it("system: OpenPanel's /healthcheck, /healthz/live and /healthz/ready", async () => {
    const api = quarry()
    expect((await api.GET('/healthcheck')).data).toEqual({ ready: true, ch: true, failedDependencies: [], workingDependencies: ['ch'] })
    expect((await api.GET('/healthz/live')).data?.live).toBe(true)
    expect((await api.GET('/healthz/ready')).data?.ready).toBe(true)
  })

  it('metrics: totals computed from the fixture, a daily series, the previous period', async () => {
    const { data, error, response } = await quarry(credentialHeaders(clients.read)).GET('/insights/{projectId}/metrics', {
      params: { path: { projectId: 'alpha' }, query: { range: '7d', interval: 'day', previous: 'true' } },
    })
    expect(error).toBeUndefined()
    expect(response.status).toBe(200)
    // s1..s4 of d1, d2, d1, d3; five page views; three single-view sessions; s1 lasts 2 minutes and earns 500.
    expect(data!.metrics).toEqual({
      unique_visitors: 3,
      total_sessions: 4,
      bounce_rate: 75,
      avg_session_duration: 30,
      total_screen_views: 5,
      views_per_session: 1.25,
      total_revenue: 500,
    })
    expect(data!.series.length).toBeGreaterThanOrEqual(7)
    expect(data!.series.reduce((sum, b) => sum + b.total_sessions, 0)).toBe(4)
    expect(data!.series.find((b) => b.date.startsWith('2024-06-14'))?.total_sessions).toBe(2)
    expect(data!.previous?.total_sessions).toBe(0)
    // 7d: the seven whole days before today and today, in the project's timezone (UTC).
    expect(response.headers.get('x-quarry-range')).toBe('2024-06-08T00:00:00Z/2024-06-16T00:00:00Z')
  })

  it('metrics with a filter: only sessions from Germany', async () => {
    const { data } = await quarry(credentialHeaders(clients.root)).GET('/insights/{projectId}/metrics', {
      params: { path: { projectId: 'alpha' }, query: { filters: [{ name: 'country', operator: 'is', value: ['DE'] }] } },
    })
    expect(data!.metrics).toMatchObject({ total_sessions: 2, unique_visitors: 1, total_screen_views: 3, total_revenue: 500 })
  })

  it('live: the one visitor of the last five minutes', async () => {
    const { data } = await quarry(credentialHeaders(clients.read)).GET('/insights/{projectId}/live', {
      params: { path: { projectId: 'alpha' } },
    })
    expect(data).toEqual({ visitors: 1 })
  })

  it('pages: ranked by sessions, paged by X-Next-Cursor', async () => {
    const api = quarry(credentialHeaders(clients.read))
    const first = await api.GET('/insights/{projectId}/pages', { params: { path: { projectId: 'alpha' }, query: { limit: 1 } } })
    expect(first.data).toEqual([expect.objectContaining({ origin: 'https://shop.test', path: '/home', sessions: 3, visitors: 3, pageviews: 3 })])
    const seen = [...first.data!.map((p) => p.path)]
    let cursor = first.response.headers.get('x-next-cursor')
    expect(first.response.headers.get('link')).toContain('rel="next"')
    while (cursor) {
      const next = await api.GET('/insights/{projectId}/pages', { params: { path: { projectId: 'alpha' }, query: { limit: 1, cursor } } })
      expect(next.response.status).toBe(200)
      seen.push(...next.data!.map((p) => p.path))
      cursor = next.response.headers.get('x-next-cursor')
    }
    expect(seen.sort()).toEqual(['/blog', '/home', '/pricing'])
  })

  it('every breakdown: sessions add up to the total, with the values of the fixture', async () => {
    const api = quarry(credentialHeaders(clients.root))
    const results = new Map<string, BreakdownRow[]>()
    for (const path of DIMENSION_PATHS) {
      const { data, response } = await api.GET(path, { params: { path: { projectId: 'alpha' }, query: { limit: 100 } } })
      expect(response.status, path).toBe(200)
      // Every session has exactly one value (possibly empty) for each dimension.
      expect(data!.reduce((sum, row) => sum + row.sessions, 0), path).toBe(4)
      results.set(path.replace('/insights/{projectId}/', ''), data!)
    }
    const row = (dimension: string, name: string) => results.get(dimension)!.find((r) => r.name === name)
    expect(row('country', 'DE')).toMatchObject({ sessions: 2, visitors: 1, pageviews: 3, revenue: 500 })
    expect(row('country', 'US')).toMatchObject({ sessions: 1, visitors: 1, bounce_rate: 100 })
    expect(row('region', 'Berlin')).toMatchObject({ prefix: 'DE', sessions: 1 })
    expect(row('browser_version', '126')).toMatchObject({ prefix: 'Firefox', sessions: 1 })
    expect(row('referrer_name', 'Google')).toMatchObject({ sessions: 1, revenue: 500 })
    expect(row('utm_source', 'newsletter')).toMatchObject({ sessions: 1, pageviews: 2 })
    expect(row('utm_campaign', 'june')).toMatchObject({ sessions: 1 })
    expect(row('entry_page', '/home')).toMatchObject({ prefix: 'https://shop.test', sessions: 3 })
    expect(row('exit_page', '/pricing')).toMatchObject({ prefix: 'https://shop.test', sessions: 1 })
  })

  it('export events: JSON pages followed by meta.nextCursor', async () => {
    const api = quarry(credentialHeaders(clients.read))
    const ids = new Set<string>()
    let cursor: string | undefined
    let pages = 0
    do {
      const { data, error, response } = await api.GET('/export/events', {
        params: { query: { projectId: 'alpha', start: '2024-06-01', end: '2024-06-15', limit: 2, ...(cursor ? { cursor } : {}) } },
      })
      expect(error, JSON.stringify(error)).toBeUndefined()
      expect(response.status).toBe(200)
      const page = jsonPage(data)
      expect(page.meta.totalCount).toBe(6)
      for (const event of page.data) {
        expect(event.projectId).toBe('alpha')
        ids.add(event.id)
      }
      cursor = page.meta.nextCursor ?? undefined
      pages++
    } while (cursor)
    expect(pages).toBe(3)
    expect(ids.size).toBe(6)

    const revenue = await api.GET('/export/events', { params: { query: { event: 'revenue', start: '2024-06-01', end: '2024-06-15' } } })
    expect(jsonPage(revenue.data).data).toEqual([expect.objectContaining({ name: 'revenue', sessionId: 's1', path: '/pricing' })])
  })

  it('export events as NDJSON', async () => {
    const { data, response } = await quarry(credentialHeaders(clients.root)).GET('/export/events', {
      params: { query: { projectId: 'alpha', format: 'ndjson', start: '2024-06-01', end: '2024-06-15' } },
      parseAs: 'text',
    })
    expect(response.headers.get('content-type')).toMatch(/^application\/x-ndjson/)
    const lines = data!.trim().split('\n').map((line) => JSON.parse(line) as { name: string })
    expect(lines).toHaveLength(6)
    expect(lines.filter((e) => e.name === 'screen_view')).toHaveLength(5)
  })

  it('export charts: page views per day and a breakdown by country', async () => {
    const { data, error } = await quarry(credentialHeaders(clients.root)).GET('/export/charts', {
      params: {
        query: {
          projectId: 'alpha',
          range: '7d',
          interval: 'day',
          series: [{ name: 'screen_view', segment: 'event' }],
          breakdowns: [{ name: 'country' }],
        },
      },
    })
    expect(error).toBeUndefined()
    // The route streams other formats as text; without format it answers the JSON chart.
    expect(typeof data).toBe('object')
    const chart = data as Exclude<typeof data, string | undefined>
    const byCountry = Object.fromEntries(chart.series.map((s) => [s.event.breakdowns?.country, s.metrics.sum]))
    expect(byCountry).toEqual({ DE: 3, US: 1, FR: 1 })
    expect(chart.metrics.sum).toBe(5)
  })

  it('errors arrive typed as the envelope', async () => {
    const anonymous = await quarry().GET('/insights/{projectId}/metrics', { params: { path: { projectId: 'alpha' } } })
    expect(anonymous.response.status).toBe(401)
    expect(anonymous.error?.code).toBe('invalid_credentials')
    expect(anonymous.error?.requestId).toBe(anonymous.response.headers.get('x-request-id'))

    const invalid = await quarry(credentialHeaders(clients.root)).GET('/insights/{projectId}/pages', {
      // A value the types allow but the server refuses: out of the documented range.
      params: { path: { projectId: 'alpha' }, query: { limit: 5000, timezone: 'Mars/Base' } },
    })
    expect(invalid.response.status).toBe(400)
    expect(invalid.error?.details?.map((d) => d.path).sort()).toEqual(['limit', 'timezone'])

    const foreign = await quarry(credentialHeaders(clients.readBeta)).GET('/export/charts', {
      params: { query: { projectId: 'alpha', series: [{ name: '*' }] } },
    })
    expect(foreign.error).toMatchObject({ status: 403, code: 'project_forbidden' })
  })

  it('explain=sql through the client (root only)', async () => {
    const root = await quarry(credentialHeaders(clients.root)).GET('/insights/{projectId}/country', {
      params: { path: { projectId: 'alpha' }, query: { explain: 'sql' } },
      parseAs: 'text',
    })
    const explained = JSON.parse(root.data!) as components['schemas']['Explain']
    expect(explained.sql[0]).toContain('readonly = 2')
    const read = await quarry(credentialHeaders(clients.read)).GET('/insights/{projectId}/country', {
      params: { path: { projectId: 'alpha' }, query: { explain: 'sql' } },
    })
    expect(read.error?.code).toBe('explain_forbidden')
  })
})
