/**
 * The one error envelope for every status, engine failures that never leak SQL, 405/414, CORS,
 * compression negotiation and explain=sql.
 */
import { ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { createServer } from 'node:net'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { httpEngine } from '../src/clickhouse/engine/http.ts'
import { createQueryGate } from '../src/clickhouse/gate.ts'
import { createQueryRunner } from '../src/clickhouse/run.ts'
import { EXPOSED_HEADERS } from '../src/http/cors.ts'
import { createLogger } from '../src/log.ts'
import { createProject } from '../src/projects.ts'
import { openTestRuntime, testApp, testConfig, type TestRuntime } from './helpers/runtime.ts'
import { credentialHeaders, NOW, seedFixture, type Credentials, type FixtureClients } from './openapi-support.ts'

let rt: TestRuntime
let clients: FixtureClients
let app: ReturnType<typeof testApp>

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000', QUARRY_AUTH_FAILURE_LIMIT: '1000000' })
  clients = await seedFixture(rt)
  app = testApp(rt, { now: () => NOW })
})

afterAll(async () => {
  await rt?.dispose()
})

const get = (target: typeof app, url: string, who?: Credentials, headers: Record<string, string> = {}) =>
  target.request(url, { headers: { ...(who ? credentialHeaders(who) : {}), ...headers } })

interface Envelope {
  status: number
  error: string
  code: string
  message: string
  details?: { path: string; message: string }[]
  requestId: string
}

/** Any text that would give away how the query was built or where the code runs. */
const INTERNALS = /SELECT\s|FROM\s+\w|SETTINGS\s|FORMAT\s|max_execution_time|FINAL|numbers\(|DB::|Code: \d+|\.ts:\d+|node_modules|\n\s+at /

/** Checks the envelope every error shares and returns it. */
async function envelope(res: Response, status: number, code: string, reason: string): Promise<Envelope> {
  const text = await res.text()
  expect(res.status, text).toBe(status)
  expect(res.headers.get('content-type')).toMatch(/^application\/json/)
  const body = JSON.parse(text) as Envelope
  expect(Object.keys(body).sort()).toEqual(
    (body.details ? ['code', 'details', 'error', 'message', 'requestId', 'status'] : ['code', 'error', 'message', 'requestId', 'status']),
  )
  expect(body).toMatchObject({ status, error: reason, code })
  expect(body.message.length).toBeGreaterThan(0)
  expect(body.requestId).toBe(res.headers.get('x-request-id'))
  expect(text).not.toMatch(INTERNALS)
  return body
}

const closedPort = async () => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('the error envelope', () => {
  it('400 lists every offending parameter at once', async () => {
    const res = await get(
      app,
      `/insights/alpha/metrics?interval=fortnight&range=forever&previous=maybe&timezone=Mars%2FBase&bogus=1&filters=${encodeURIComponent('[{"name":"path","operator":"like","value":["x"]}]')}`,
      clients.root,
    )
    const body = await envelope(res, 400, 'invalid_parameters', 'Bad Request')
    const paths = body.details!.map((d) => d.path)
    for (const p of ['interval', 'range', 'previous', 'timezone', 'filters']) {
      expect(paths.some((path) => path === p || path.startsWith(`${p}.`)), `${p} in ${paths.join(', ')}`).toBe(true)
    }
    expect(JSON.stringify(body.details)).toContain('bogus')
    for (const d of body.details!) expect(d.message.length).toBeGreaterThan(0)

    // The same on a list route and on the exports.
    const list = await envelope(await get(app, '/insights/alpha/pages?limit=0&cursor=&range=nope', clients.root), 400, 'invalid_parameters', 'Bad Request')
    expect(list.details!.map((d) => d.path)).toEqual(expect.arrayContaining(['limit', 'range']))
    const events = await envelope(await get(app, '/export/events?projectId=alpha&limit=x&format=xml&page=1.5', clients.root), 400, 'invalid_parameters', 'Bad Request')
    expect(events.details!.map((d) => d.path)).toEqual(expect.arrayContaining(['limit', 'format', 'page']))
  })

  it('400 for a regex the engine cannot compile, without its error text', async () => {
    const filters = encodeURIComponent(JSON.stringify([{ name: 'path', operator: 'regex', value: ['(unclosed'] }]))
    const body = await envelope(await get(app, `/insights/alpha/pages?filters=${filters}`, clients.root), 400, 'invalid_parameters', 'Bad Request')
    expect(body.details).toEqual([{ path: 'filters', message: expect.any(String) }])
  })

  it('401, 403 and 404', async () => {
    await envelope(await get(app, '/insights/alpha/metrics'), 401, 'invalid_credentials', 'Unauthorized')
    await envelope(await get(app, '/export/events?projectId=alpha', { id: clients.root.id, secret: 'nope' }), 401, 'invalid_credentials', 'Unauthorized')
    await envelope(await get(app, '/insights/alpha/metrics', clients.write), 403, 'client_type_not_allowed', 'Forbidden')
    await envelope(await get(app, '/insights/alpha/metrics', clients.readBeta), 403, 'project_forbidden', 'Forbidden')
    await envelope(await get(app, '/insights/gamma/metrics', clients.root), 404, 'project_not_found', 'Not Found')
    await envelope(await get(app, '/export/charts', clients.root), 400, 'project_required', 'Bad Request')
    await envelope(await get(app, '/no/such/route', clients.root), 404, 'not_found', 'Not Found')
  })

  it('405 with Allow on a known path', async () => {
    for (const [method, url] of [
      ['POST', '/insights/alpha/metrics'],
      ['PUT', '/export/events?projectId=alpha'],
      ['DELETE', '/healthz'],
      ['PATCH', '/openapi.json'],
    ] as const) {
      const res = await app.request(url, { method, headers: credentialHeaders(clients.root) })
      await envelope(res, 405, 'method_not_allowed', 'Method Not Allowed')
      expect(res.headers.get('allow')).toBe('GET, HEAD')
    }
  })

  it('414 when the query string is over 16 KB, before authentication', async () => {
    const pad = 'x'.repeat(16 * 1024)
    await envelope(await get(app, `/insights/alpha/metrics?pad=${pad}`), 414, 'uri_too_long', 'URI Too Long')
    await envelope(await get(app, `/export/events?pad=${pad}`, clients.root), 414, 'uri_too_long', 'URI Too Long')
    // Right at the limit it is an ordinary request (here: a 400 for the unknown parameter).
    const exact = `pad=${'x'.repeat(16 * 1024 - 4)}`
    await envelope(await get(app, `/insights/alpha/metrics?${exact}`, clients.root), 400, 'invalid_parameters', 'Bad Request')
  })

  it('429 with Retry-After', async () => {
    const tiny = testApp(rt, { now: () => NOW, config: { ...rt.config, QUARRY_RATE_LIMIT: 2, QUARRY_RATE_WINDOW_S: 600 } })
    expect((await get(tiny, '/insights/alpha/live', clients.read)).status).toBe(200)
    expect((await get(tiny, '/insights/alpha/live', clients.read)).status).toBe(200)
    const res = await get(tiny, '/insights/alpha/live', clients.read)
    await envelope(res, 429, 'rate_limited', 'Too Many Requests')
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(res.headers.get('ratelimit-remaining')).toBe('0')
  })

  it('503 overloaded with Retry-After when more queries arrive than the gate admits and queues', async () => {
    const config = testConfig({ QUARRY_DATA_DIR: rt.dir, QUARRY_MAX_CONCURRENT_QUERIES: '1', QUARRY_MAX_QUEUED_QUERIES: '0' })
    const gate = createQueryGate({ concurrency: config.QUARRY_MAX_CONCURRENT_QUERIES, maxQueued: config.QUARRY_MAX_QUEUED_QUERIES })
    const busy = testApp(rt, {
      now: () => NOW,
      config: { ...rt.config, ...config, QUARRY_RATE_LIMIT: 1000000 },
      runner: createQueryRunner(rt.engine, gate, createLogger('silent')),
    })
    // Credentials and the project are verified once and cached; then only the routes query.
    expect((await get(busy, '/insights/alpha/metrics', clients.root)).status).toBe(200)
    const responses = await Promise.all(
      Array.from({ length: 12 }, () => get(busy, '/insights/alpha/metrics?interval=hour', clients.root)),
    )
    const statuses = responses.map((r) => r.status)
    expect(statuses).toContain(200)
    expect(statuses).toContain(503)
    for (const res of responses) {
      if (res.status === 200) continue
      await envelope(res, 503, 'overloaded', 'Service Unavailable')
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    }
  })

  it('503 engine_unavailable with Retry-After when ClickHouse does not answer; /readyz 503', async () => {
    const client = createClient({ url: `http://127.0.0.1:${await closedPort()}`, request_timeout: 2000, log: { level: ClickHouseLogLevel.OFF } })
    const runner = createQueryRunner(httpEngine(client, 'quarry'), createQueryGate({ concurrency: 2, maxQueued: 8 }), createLogger('silent'))
    try {
      const down = testApp(rt, { now: () => NOW, runner })
      for (const url of ['/insights/alpha/metrics', '/export/events?projectId=alpha']) {
        const res = await get(down, url, clients.root)
        await envelope(res, 503, 'engine_unavailable', 'Service Unavailable')
        expect(res.headers.get('retry-after')).toBe('5')
      }
      const ready = await down.request('/readyz')
      expect(ready.status).toBe(503)
      expect(ready.headers.get('retry-after')).toBe('5')
      expect((await down.request('/healthz')).status).toBe(200)
    } finally {
      await client.close()
    }
  })

  it('504 query_timeout when ClickHouse exceeds QUARRY_QUERY_TIMEOUT_S', async () => {
    await createProject(rt.runner, { id: 'big', name: 'Big', timezone: 'UTC', organizationId: 'org-a' })
    // 2M page views in 1000 sessions on the day before NOW, generated inside ClickHouse.
    await rt.runner.command({
      name: 'big_events',
      sql: `INSERT INTO events (name, device_id, profile_id, project_id, session_id, created_at, path, origin)
            SELECT 'screen_view', toString(number % 1000), toString(number % 1000), {project:String}, toString(number % 1000),
                   toDateTime64('2024-06-14 00:00:00', 3, 'UTC') + toIntervalSecond(number % 86400),
                   concat('/p', toString(number % 100)), 'https://big.test'
            FROM numbers({rows:UInt64})`,
      params: { project: 'big', rows: 2_000_000 },
    })
    // An event filter makes the query read every event of the window.
    const url = `/insights/big/metrics?filters=${encodeURIComponent('[{"name":"path","operator":"contains","value":["zz_none"]}]')}`
    const config = testConfig({ QUARRY_QUERY_TIMEOUT_S: '0.02' })
    expect(config.QUARRY_QUERY_TIMEOUT_S).toBe(0.02)
    const impatient = testApp(rt, { now: () => NOW, config: { ...rt.config, QUARRY_QUERY_TIMEOUT_S: config.QUARRY_QUERY_TIMEOUT_S } })
    const res = await get(impatient, url, clients.root)
    const body = await envelope(res, 504, 'query_timeout', 'Gateway Timeout')
    expect(JSON.stringify(body)).not.toContain('Timeout exceeded')
    // The same request within the default limit answers.
    expect((await get(app, url, clients.root)).status).toBe(200)
  })
})

describe('CORS', () => {
  it('answers a preflight before authentication: 204, any origin, no credentials', async () => {
    for (const url of ['/insights/alpha/metrics', '/export/events']) {
      const res = await app.request(url, {
        method: 'OPTIONS',
        headers: {
          Origin: 'https://dashboard.example',
          'Access-Control-Request-Method': 'GET',
          'Access-Control-Request-Headers': 'openpanel-client-id, openpanel-client-secret',
        },
      })
      expect(res.status).toBe(204)
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
      expect(res.headers.get('access-control-allow-credentials')).toBeNull()
      expect(res.headers.get('access-control-allow-methods')).toContain('GET')
      const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase()
      expect(allowed).toContain('openpanel-client-id')
      expect(allowed).toContain('openpanel-client-secret')
      expect(allowed).toContain('authorization')
    }
  })

  it('exposes the custom headers on a normal response and on errors', async () => {
    const res = await get(app, '/insights/alpha/pages?limit=1', clients.root, { Origin: 'https://dashboard.example' })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('access-control-allow-credentials')).toBeNull()
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').split(/,\s*/).map((h) => h.toLowerCase())
    for (const h of ['x-next-cursor', 'link', 'x-quarry-range', 'x-quarry-stats', 'server-timing', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'x-request-id']) {
      expect(exposed).toContain(h)
    }
    expect(exposed).toEqual(EXPOSED_HEADERS.map((h) => h.toLowerCase()))
    // The exposed headers are really there.
    expect(res.headers.get('x-next-cursor')).toBeTruthy()
    expect(res.headers.get('x-quarry-stats')).toBe('queries=1')
    expect(res.headers.get('server-timing')).toMatch(/^db;dur=[\d.]+, total;dur=[\d.]+$/)

    const denied = await get(app, '/insights/alpha/pages', undefined, { Origin: 'https://dashboard.example' })
    expect(denied.status).toBe(401)
    expect(denied.headers.get('access-control-allow-origin')).toBe('*')
  })
})

describe('compression', () => {
  const big = '/insights/alpha/metrics?interval=hour'

  it('gzips a response over 1 KB when the client accepts it; the body is the same', async () => {
    const identity = await get(app, big, clients.root)
    expect(identity.headers.get('content-encoding')).toBeNull()
    const plain = Buffer.from(await identity.arrayBuffer())
    expect(plain.byteLength).toBeGreaterThan(1024)

    const zipped = await get(app, big, clients.root, { 'Accept-Encoding': 'gzip' })
    expect(zipped.status).toBe(200)
    expect(zipped.headers.get('content-encoding')).toBe('gzip')
    expect(zipped.headers.get('vary')?.toLowerCase()).toContain('accept-encoding')
    const compressed = Buffer.from(await zipped.arrayBuffer())
    expect(compressed.byteLength).toBeLessThan(plain.byteLength)
    expect(gunzipSync(compressed).toString('utf8')).toBe(plain.toString('utf8'))
  })

  it('leaves small responses and clients that do not ask alone', async () => {
    const small = await get(app, '/insights/alpha/live', clients.root, { 'Accept-Encoding': 'gzip' })
    expect(small.headers.get('content-encoding')).toBeNull()
    expect(await small.json()).toEqual({ visitors: 1 })
    const identity = await get(app, big, clients.root, { 'Accept-Encoding': 'identity' })
    expect(identity.headers.get('content-encoding')).toBeNull()
    expect(JSON.parse(await identity.text())).toHaveProperty('series')
  })
})

describe('explain=sql', () => {
  const NEEDLE = 'zz_needle_zz'
  const filters = encodeURIComponent(JSON.stringify([{ name: 'path', operator: 'is', value: [NEEDLE] }]))
  const urls = [
    `/insights/alpha/metrics?filters=${filters}&previous=true`,
    `/insights/alpha/live`,
    `/insights/alpha/pages?filters=${filters}`,
    `/insights/alpha/referrer?filters=${filters}`,
    `/insights/alpha/region?filters=${filters}`,
    `/export/events?projectId=alpha&filters=${filters}&event=${NEEDLE}`,
    `/export/events?projectId=alpha&filters=${filters}&format=csv`,
    `/export/charts?projectId=alpha&series=${encodeURIComponent(JSON.stringify([{ name: NEEDLE, filters: [{ name: 'path', operator: 'is', value: [NEEDLE] }] }]))}`,
  ]

  it('answers a root client with the statements and bound parameters, user values only in params', async () => {
    for (const url of urls) {
      const res = await get(app, `${url}${url.includes('?') ? '&' : '?'}explain=sql`, clients.root)
      const text = await res.text()
      expect(res.status, `${url}: ${text}`).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^application\/json/)
      expect(res.headers.get('content-disposition')).toBeNull()
      const body = JSON.parse(text) as { sql: string[]; params: Record<string, unknown> }
      expect(Object.keys(body).sort()).toEqual(['params', 'sql'])
      expect(body.sql.length, url).toBeGreaterThan(0)
      for (const sql of body.sql) {
        expect(sql).toContain('readonly = 2')
        expect(sql).toMatch(/max_execution_time = \d/)
        expect(sql).not.toContain(NEEDLE)
        expect(sql).not.toMatch(/'alpha'|"alpha"/)
        // Every placeholder the statement uses (outside its comments) is bound.
        const code = sql.replace(/--[^\n]*/g, '')
        for (const [, name] of code.matchAll(/\{(\w+):[^}]+\}/g)) expect(body.params, `${url}: ${name}`).toHaveProperty(name!)
      }
      expect(Object.values(body.params)).toContain('alpha')
      if (url.includes(filters) || url.includes('charts')) expect(JSON.stringify(body.params)).toContain(NEEDLE)
    }
  })

  it('runs nothing: explaining a request that would time out answers at once', async () => {
    const impatient = testApp(rt, { now: () => NOW, config: { ...rt.config, QUARRY_QUERY_TIMEOUT_S: 0.001 } })
    const res = await get(impatient, '/insights/alpha/metrics?explain=sql', clients.root)
    expect(res.status).toBe(200)
    expect(res.headers.get('x-quarry-stats')).toBeNull()
  })

  it('403 explain_forbidden for read clients; 400 for another explain value', async () => {
    for (const url of urls) {
      const sep = url.includes('?') ? '&' : '?'
      await envelope(await get(app, `${url}${sep}explain=sql`, clients.read), 403, 'explain_forbidden', 'Forbidden')
    }
    const body = await envelope(await get(app, '/insights/alpha/metrics?explain=plan', clients.root), 400, 'invalid_parameters', 'Bad Request')
    expect(body.details).toEqual([{ path: 'explain', message: expect.any(String) }])
  })
})
