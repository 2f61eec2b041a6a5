/**
 * Issue 7, hostile input: property-based tests (fast-check) over every parameter of every route the
 * OpenAPI document lists. Whatever arrives (random and unicode strings, NUL, quotes, backslashes,
 * SQL fragments, huge numbers, deeply nested and enormous JSON, 10,000-element arrays, 100 KB query
 * strings, bracket notation gone wrong) the answer is a 2xx or a 4xx in the error envelope, never a
 * 5xx, and a read client of one project never sees another's rows. With explain=sql, no value the
 * caller sent appears in the SQL text: values travel as parameters. The documented limits (16 KB
 * query string, 20 filters, 100 values, 10 series, 3 breakdowns) answer 414/400 one past them.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SEGMENTS } from '../src/query/charts.ts'
import { EVENT_COLUMNS, UTM_FIELDS } from '../src/query/event-columns.ts'
import { OPERATORS } from '../src/query/filters.ts'
import { RANGES, INTERVALS } from '../src/query/time-range.ts'
import { INCLUDE_GROUPS } from '../src/query/export-events.ts'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'
import {
  credentialHeaders,
  NOW,
  operationsOf,
  seedFixture,
  type Credentials,
  type FixtureClients,
  type OpenApiDocument,
} from './openapi-support.ts'

let rt: TestRuntime
let clients: FixtureClients
let app: ReturnType<typeof testApp>
/** Every query parameter of every /insights and /export operation, by route template. */
let routes: { path: string; params: string[] }[] = []

/** Planted in every string column of project beta: none of it may reach a read client of alpha. */
const BETA_MARK = 'betaonlyQ9'

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '100000000', QUARRY_AUTH_FAILURE_LIMIT: '100000000' })
  clients = await seedFixture(rt)
  const beta = (i: number) => ({
    project_id: 'beta',
    name: i % 2 ? 'screen_view' : `${BETA_MARK}_event`,
    session_id: `${BETA_MARK}-s${i % 3}`,
    device_id: `${BETA_MARK}-d${i % 2}`,
    profile_id: `${BETA_MARK}-d${i % 2}`,
    created_at: `2024-06-1${3 + (i % 3)} 0${i % 10}:00:00.000`,
    path: `/${BETA_MARK}/${i}`,
    origin: `https://${BETA_MARK}.test`,
    referrer: `https://${BETA_MARK}.ref/`,
    referrer_name: BETA_MARK,
    referrer_type: BETA_MARK,
    country: BETA_MARK,
    city: BETA_MARK,
    region: BETA_MARK,
    os: BETA_MARK,
    os_version: BETA_MARK,
    browser: BETA_MARK,
    browser_version: BETA_MARK,
    device: BETA_MARK,
    brand: BETA_MARK,
    model: BETA_MARK,
    revenue: 7,
    properties: { '__query.utm_source': BETA_MARK, '__query.utm_medium': BETA_MARK, '__query.utm_campaign': BETA_MARK, plan: BETA_MARK },
  })
  await rt.engine.client.insert({ table: 'events', values: Array.from({ length: 12 }, (_, i) => beta(i)), format: 'JSONEachRow' })
  app = testApp(rt, { now: () => NOW })
  const doc = (await (await app.request('/openapi.json')).json()) as OpenApiDocument
  routes = operationsOf(doc)
    .filter(({ path }) => path.startsWith('/insights/') || path.startsWith('/export/'))
    .map(({ path, operation }) => ({
      path,
      params: (operation.parameters ?? []).filter((p) => p.in === 'query' && p.name !== 'explain').map((p) => p.name),
    }))
}, 120_000)

afterAll(async () => {
  await rt?.dispose()
})

// ---------------------------------------------------------------------------------------------
// Generators

const SQL_FRAGMENTS = [
  "' OR 1=1 --",
  "'; DROP TABLE events; --",
  "alpha' OR project_id = 'beta",
  "beta') OR ('1'='1",
  '") UNION ALL SELECT * FROM clients --',
  '{project:String}',
  '{x:Identifier}',
  '}}{{',
  '\\',
  "\\'",
  '\\\\\'\\"',
  '\u0000',
  'a\u0000b',
  '%00',
  '%27',
  '`',
  '$1',
  '?',
  '/*',
  '*/',
  '--',
  ';',
  'SETTINGS readonly = 0',
  'FORMAT Native',
  'INTO OUTFILE \'x\'',
  "file('/etc/passwd')",
  '../../etc/passwd',
  'beta',
  'gamma',
  '*',
  '',
  ' ',
  '\t\n\r',
  '\u202e\u200b\ufeff',
  '😀👍🏽',
  '\ud800',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '[[[[]]]]',
  '{"__proto__":{"polluted":1}}',
  'constructor',
  '__proto__',
]

const HUGE_NUMBERS = ['1e308', '-1e308', '1e309', '9'.repeat(400), '-0', '0x10', '1_000', 'NaN', 'Infinity', '-Infinity', '2147483648', '18446744073709551616', '0.0000001', '3.', '.5', '1e-400']

const DATES = ['2024-06-14', '2024-13-45', '0000-01-01', '9999-12-31', '-271821-04-20', '275760-09-13', '2024-06-14T25:61:61Z', '2024-06-14T10:00:00+99:00', '2024-02-30', '1970-01-01T00:00:00Z', '2024-06-14T10:00:00.123456789Z', 'yesterday', '0', '-1']

const scalar = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SQL_FRAGMENTS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.constantFrom(...HUGE_NUMBERS) },
  { weight: 1, arbitrary: fc.constantFrom(...DATES) },
  { weight: 1, arbitrary: fc.constantFrom(...RANGES, ...INTERVALS, 'true', 'false', 'json', 'ndjson', 'csv', 'sql') },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.double().map(String) },
)

/** A JSON value of any shape, hostile strings at the leaves. */
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('json'), { maxLength: 5 }),
    fc.dictionary(fc.oneof(fc.constantFrom('name', 'operator', 'value', 'id', 'segment', 'property', 'filters', '__proto__'), fc.string({ maxLength: 8 })), tie('json'), { maxKeys: 5 }),
  ),
}))

const FILTER_NAMES = [...EVENT_COLUMNS.map(([n]) => n), ...UTM_FIELDS, 'properties.plan', 'properties.', 'properties', 'entry_page', 'exit_page', 'is_bounce', 'referrer_name']

/** Filters that are mostly well-formed, so that validation passes often and the SQL is built. */
const filter = fc.record(
  {
    name: fc.oneof(fc.constantFrom(...FILTER_NAMES), scalar, scalar.map((s) => `properties.${s}`)),
    operator: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...OPERATORS) }, { weight: 1, arbitrary: scalar }),
    value: fc.array(fc.oneof(scalar, fc.integer(), fc.double(), fc.boolean()), { maxLength: 4 }),
    id: scalar,
  },
  { requiredKeys: ['name', 'operator', 'value'] },
)
const filters = fc.array(filter, { maxLength: 4 })

const seriesItem = fc.record(
  {
    name: fc.oneof(fc.constantFrom('screen_view', '*', 'revenue'), scalar),
    filters,
    segment: fc.oneof(fc.constantFrom(...SEGMENTS, 'group'), scalar),
    property: fc.oneof(fc.constantFrom('duration', 'revenue', 'properties.plan'), scalar),
  },
  { requiredKeys: ['name'] },
)
const breakdowns = fc.array(fc.record({ name: fc.oneof(fc.constantFrom(...FILTER_NAMES), scalar.map((s) => `properties.${s}`), scalar) }), { maxLength: 4 })

/** Extreme shapes: deep nesting, enormous arrays and strings (all beyond 16 KB end as 414). */
const extreme = fc.oneof(
  fc.integer({ min: 1, max: 20_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
  fc.integer({ min: 1, max: 5_000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
  fc.constant(JSON.stringify(Array.from({ length: 10_000 }, (_, i) => i))),
  fc.constant(JSON.stringify(Array.from({ length: 10_000 }, () => ({ name: 'path', operator: 'is', value: ['x'] })))),
  fc.constant(JSON.stringify([{ name: 'path', operator: 'is', value: Array.from({ length: 10_000 }, () => 'x') }])),
  fc.constant('x'.repeat(100 * 1024)),
  fc.constant('%'.repeat(3000)),
  fc.constant('"'.repeat(5000)),
)

/** A value for a parameter: text, or JSON (of a structure the route might expect, or of anything). */
function valueFor(param: string): fc.Arbitrary<string> {
  const structured =
    param === 'filters'
      ? filters.map((v) => JSON.stringify(v))
      : param === 'series' || param === 'events'
        ? fc.array(seriesItem, { maxLength: 3 }).map((v) => JSON.stringify(v))
        : param === 'breakdowns'
          ? breakdowns.map((v) => JSON.stringify(v))
          : param === 'includes'
            ? fc.array(fc.oneof(fc.constantFrom(...Object.keys(INCLUDE_GROUPS)), scalar), { maxLength: 4 }).map((v) => v.join(','))
            : scalar
  return fc.oneof(
    { weight: 6, arbitrary: structured },
    { weight: 3, arbitrary: scalar },
    { weight: 2, arbitrary: json.map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: extreme },
  )
}

interface Case {
  route: { path: string; params: string[] }
  projectId: string
  pairs: [string, string][]
}

/** A request: a route, a project, some of its parameters (some repeated, some in bracket notation, some unknown). */
const requestCase: fc.Arbitrary<Case> = fc
  .integer({ min: 0, max: 10_000 })
  .chain((i) => {
    const route = routes[i % routes.length]!
    // /live takes no parameters at all: every one is unknown there.
    const known = route.params.length > 0 ? fc.constantFrom(...route.params) : scalar
    const pair = fc.oneof(
      { weight: 8, arbitrary: known.chain((name) => valueFor(name).map((v) => [name, v] as [string, string])) },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom('filters[0][name]', 'filters[0][operator]', 'filters[0][value]', 'filters[0][value][0]', 'filters[999][value][999]', 'filters[1][id]', 'filters[a][b]', 'filters[0][name][x]', 'filters[]'), scalar) },
      { weight: 1, arbitrary: fc.tuple(scalar, scalar) },
      { weight: 1, arbitrary: fc.constantFrom(...RAW_PAIRS).map((raw) => ['', raw] as [string, string]) },
    )
    return fc.record({
      route: fc.constant(route),
      projectId: fc.oneof({ weight: 6, arbitrary: fc.constant('alpha') }, { weight: 1, arbitrary: fc.constantFrom('beta', 'gamma', '', '..', '%2e%2e') }, { weight: 1, arbitrary: scalar }),
      pairs: fc.array(pair, { maxLength: 6 }),
    })
  })

/** Lone surrogates have no UTF-8 form; a client would send U+FFFD (raw invalid bytes come from RAW_PAIRS). */
const encode = (s: string) => encodeURIComponent(s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'))

/** Sent as they are, not encoded: malformed percent-escapes and bytes that are not UTF-8. */
const RAW_PAIRS = ['filters=%ED%A0%80', 'range=%FF%FE', 'x=%', '%=1', 'filters=%5B%7B%22name%22%3A%22path%22%2C%22operator%22%3A%22is%22%2C%22value%22%3A%5B%22%C0%AF%22%5D%7D%5D', 'startDate=%00', 'filters[0][name]=%E2%80%AE', '&&&', '=', 'a=b=c', 'limit=%2B1', 'cursor=%3D%3D']

function urlOf(c: Case): string {
  const search = c.pairs.map(([k, v]) => (k === '' && RAW_PAIRS.includes(v) ? v : `${encode(k)}=${encode(v)}`)).join('&')
  const path = c.route.path.includes('{projectId}')
    ? c.route.path.replace('{projectId}', encode(c.projectId))
    : c.route.path
  const project = c.route.path.includes('{projectId}') ? '' : `projectId=${encode(c.projectId)}`
  return `${path}?${[project, search].filter(Boolean).join('&')}`
}

async function send(url: string, who: Credentials, extra = '') {
  const res = await app.request(url + extra, { headers: credentialHeaders(who) })
  return { res, text: await res.text() }
}

function expectNoServerError(url: string, res: Response, text: string) {
  expect(res.status, `${url.slice(0, 300)} → ${res.status} ${text.slice(0, 300)}`).toBeLessThan(500)
  expect(res.status).toBeGreaterThanOrEqual(200)
  if (res.status >= 400) {
    const body = JSON.parse(text) as Record<string, unknown>
    expect(body).toMatchObject({ status: res.status, code: expect.any(String), requestId: res.headers.get('x-request-id') })
  }
}

// ---------------------------------------------------------------------------------------------

describe('hostile parameters on every route', () => {
  it('discovers every /insights and /export route and its parameters from the OpenAPI document', () => {
    expect(routes.length).toBeGreaterThanOrEqual(25)
    const byPath = Object.fromEntries(routes.map((r) => [r.path, r.params]))
    expect(byPath['/export/events']).toEqual(expect.arrayContaining(['projectId', 'event', 'start', 'end', 'profileId', 'filters', 'includes', 'limit', 'page', 'cursor', 'format']))
    expect(byPath['/export/charts']).toEqual(expect.arrayContaining(['series', 'events', 'breakdowns', 'interval', 'range', 'previous']))
    expect(byPath['/insights/{projectId}/metrics']).toEqual(expect.arrayContaining(['range', 'startDate', 'endDate', 'timezone', 'filters', 'interval', 'previous']))
  })

  it('a read client of alpha: always 2xx or 4xx, never 5xx, and never a row of beta', async () => {
    let ok = 0
    await fc.assert(
      fc.asyncProperty(requestCase, async (c) => {
        const url = urlOf(c)
        const { res, text } = await send(url, clients.read)
        expectNoServerError(url, res, text)
        if (res.status < 300) {
          ok++
          expect(text, url).not.toContain(BETA_MARK)
          // A project id of '..' takes the URL out of its route (to the operators' /metrics): no project's answer.
          const escaped = !new URL(url, 'http://quarry.test').pathname.startsWith(c.route.path.split('{')[0]!)
          expect(c.projectId === 'alpha' || !c.route.path.includes('{projectId}') || escaped, url).toBe(true)
        }
      }),
      { numRuns: Number(process.env.HOSTILE_RUNS ?? 600), seed: Number(process.env.HOSTILE_SEED ?? 7331) },
    )
    // The property means something only if many requests got through validation to the engine.
    expect(ok).toBeGreaterThan(30)
  })

  it('a root client of the organisation, streaming formats included: never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(requestCase, fc.constantFrom('', '&format=ndjson', '&format=csv'), async (c, format) => {
        const url = urlOf(c)
        const { res, text } = await send(url, clients.root, c.route.path === '/export/events' ? format : '')
        expectNoServerError(url, res, text)
      }),
      { numRuns: Number(process.env.HOSTILE_RUNS ?? 400), seed: Number(process.env.HOSTILE_SEED ?? 1337) },
    )
  })
})

describe('values never reach the SQL text', () => {
  /** A value that cannot occur in any template by chance, wrapped in hostile characters. */
  const marked = fc
    // (Not starting with [ or {: such a value of a JSON-capable parameter is read as JSON.)
    .tuple(fc.integer({ min: 100000, max: 999999 }), fc.constantFrom(...SQL_FRAGMENTS.filter((s) => s.trim().length > 0 && !/^\s*[[{]/.test(s))))
    .map(([n, frag]) => ({ token: `zqv${n}`, value: `${frag}zqv${n}${frag}` }))

  /** Requests that pass validation, with marked values in every position that takes free text. */
  const explained = fc
    .record({
      route: fc.constantFrom('metrics', 'pages', 'referrer', 'country', 'utm_source', 'entry_page', 'events', 'charts'),
      filterValues: fc.array(marked, { minLength: 1, maxLength: 3 }),
      propertyKey: marked,
      // Operators that take the values as text (isNull/isNotNull ignore them, the others need numbers or patterns).
      operator: fc.constantFrom(...OPERATORS.filter((o) => !['regex', 'gt', 'lt', 'gte', 'lte', 'isNull', 'isNotNull'].includes(o))),
      column: fc.constantFrom('path', 'referrer', 'country', 'browser', 'utm_source', 'name', 'device_id'),
      eventName: marked,
      profileId: marked,
      breakdownKey: marked,
    })

  it('with explain=sql, the statements for any accepted request hold none of the values, which are all in params', async () => {
    let checked = 0
    await fc.assert(
      fc.asyncProperty(explained, async (e) => {
        const values = e.filterValues.map((m) => m.value)
        const f = JSON.stringify([
          { name: e.column, operator: e.operator, value: values },
          { name: `properties.${e.propertyKey.value}`, operator: 'is', value: [e.filterValues[0]!.value] },
        ])
        let url: string
        let tokens = [...e.filterValues.map((m) => m.token), e.propertyKey.token]
        if (e.route === 'events') {
          url = `/export/events?projectId=alpha&event=${encodeURIComponent(e.eventName.value)}&profileId=${encodeURIComponent(e.profileId.value)}&filters=${encodeURIComponent(f)}`
          tokens = [...tokens, e.eventName.token, e.profileId.token]
        } else if (e.route === 'charts') {
          const series = JSON.stringify([{ name: e.eventName.value, filters: JSON.parse(f) as unknown[] }])
          const b = JSON.stringify([{ name: `properties.${e.breakdownKey.value}` }])
          url = `/export/charts?projectId=alpha&series=${encodeURIComponent(series)}&breakdowns=${encodeURIComponent(b)}`
          tokens = [...tokens, e.eventName.token, e.breakdownKey.token]
        } else {
          url = `/insights/alpha/${e.route}?filters=${encodeURIComponent(f)}`
        }
        const { res, text } = await send(url, clients.root, '&explain=sql')
        expect(res.status, `${url} → ${text.slice(0, 300)}`).toBe(200)
        const body = JSON.parse(text) as { sql: string[]; params: Record<string, unknown> }
        const sql = body.sql.join('\n')
        const params = JSON.stringify(body.params)
        for (const token of tokens) {
          expect(sql, `${token} in the SQL of ${url}`).not.toContain(token)
          expect(params, `${token} not among the params of ${url}`).toContain(token)
        }
        for (const value of [...values, e.eventName.value, e.profileId.value]) expect(sql).not.toContain(value)
        checked++
        // And the query itself runs: same request, read client, no explain.
        const real = await send(url, clients.read)
        expectNoServerError(url, real.res, real.text)
        expect(real.res.status).toBe(200)
      }),
      { numRuns: 150, seed: 4242 },
    )
    expect(checked).toBe(150)
  })
})

describe('limits', () => {
  const f = (n: number, values = 1) =>
    encodeURIComponent(JSON.stringify(Array.from({ length: n }, () => ({ name: 'path', operator: 'is', value: Array.from({ length: values }, (_, i) => `/v${i}`) }))))
  const series = (n: number) => encodeURIComponent(JSON.stringify(Array.from({ length: n }, () => ({ name: 'screen_view' }))))
  const bd = (names: string[]) => encodeURIComponent(JSON.stringify(names.map((name) => ({ name }))))

  async function status(url: string) {
    const { res, text } = await send(url, clients.read)
    expectNoServerError(url, res, text)
    return res.status
  }

  it('query string: 16 KB passes, one byte more is 414, 100 KB is 414', async () => {
    const padTo = (bytes: number) => `x=${'a'.repeat(bytes - 2)}`
    expect(await status(`/insights/alpha/metrics?${padTo(16 * 1024)}`)).toBe(400)
    expect(await status(`/insights/alpha/metrics?${padTo(16 * 1024 + 1)}`)).toBe(414)
    expect(await status(`/export/events?${padTo(100 * 1024)}`)).toBe(414)
  })

  it('filters: 20 pass, 21 are a 400; 100 values pass, 101 are a 400; on insights, events and charts alike', async () => {
    for (const base of ['/insights/alpha/metrics?', '/insights/alpha/pages?', '/export/events?projectId=alpha&']) {
      expect(await status(`${base}filters=${f(20)}`)).toBe(200)
      expect(await status(`${base}filters=${f(21)}`)).toBe(400)
      expect(await status(`${base}filters=${f(1, 100)}`)).toBe(200)
      expect(await status(`${base}filters=${f(1, 101)}`)).toBe(400)
    }
    const withFilters = (n: number, values = 1) => encodeURIComponent(JSON.stringify([{ name: 'screen_view', filters: JSON.parse(decodeURIComponent(f(n, values))) as unknown }]))
    expect(await status(`/export/charts?projectId=alpha&series=${withFilters(20)}`)).toBe(200)
    expect(await status(`/export/charts?projectId=alpha&series=${withFilters(21)}`)).toBe(400)
    expect(await status(`/export/charts?projectId=alpha&series=${withFilters(1, 101)}`)).toBe(400)
  })

  it('series: 10 pass, 11 are a 400; breakdowns: 3 pass, 4 are a 400', async () => {
    expect(await status(`/export/charts?projectId=alpha&series=${series(10)}`)).toBe(200)
    expect(await status(`/export/charts?projectId=alpha&series=${series(11)}`)).toBe(400)
    expect(await status(`/export/charts?projectId=alpha&events=${series(11)}`)).toBe(400)
    expect(await status(`/export/charts?projectId=alpha&series=${series(1)}&breakdowns=${bd(['country', 'browser', 'os'])}`)).toBe(200)
    expect(await status(`/export/charts?projectId=alpha&series=${series(1)}&breakdowns=${bd(['country', 'browser', 'os', 'device'])}`)).toBe(400)
  })

  it('bracket notation cannot get round the limits', async () => {
    const brackets = (n: number) => Array.from({ length: n }, (_, i) => `filters[${i}][name]=path&filters[${i}][operator]=is&filters[${i}][value][0]=x`).join('&')
    expect(await status(`/insights/alpha/metrics?${brackets(20)}`)).toBe(200)
    expect(await status(`/insights/alpha/metrics?${brackets(21)}`)).toBe(400)
    const values = (n: number) => Array.from({ length: n }, (_, i) => `filters[0][value][${i}]=v`).join('&')
    expect(await status(`/insights/alpha/metrics?filters[0][name]=path&filters[0][operator]=is&${values(100)}`)).toBe(200)
    expect(await status(`/insights/alpha/metrics?filters[0][name]=path&filters[0][operator]=is&${values(101)}`)).toBe(400)
    // Indexes far apart do not make a sparse array of a thousand holes.
    expect(await status('/insights/alpha/metrics?filters[0][name]=path&filters[0][operator]=is&filters[0][value][0]=x&filters[999][name]=path&filters[999][operator]=is&filters[999][value][0]=y')).toBe(400)
  })
})
