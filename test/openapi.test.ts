/**
 * GET /openapi.json: a valid OpenAPI 3.1 document of every route, and every real response —
 * success and each documented error — matches what the document says about it.
 */
import { ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { Validator } from '@seriousme/openapi-schema-validator'
import { readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { httpEngine } from '../src/clickhouse/engine/http.ts'
import { createQueryGate } from '../src/clickhouse/gate.ts'
import { createQueryRunner, type QueryRunner, type Statement } from '../src/clickhouse/run.ts'
import { EXPOSED_HEADERS } from '../src/http/cors.ts'
import { RESPONSE_HEADERS } from '../src/http/response-headers.ts'
import { ERROR_CODES } from '../src/http/error-codes.ts'
import { createLogger } from '../src/log.ts'
import { DIMENSIONS } from '../src/query/dimensions.ts'
import { PRODUCT_ROUTES } from '../src/routes/product.ts'
import { EVENT_ROUTES } from '../src/routes/insights-events.ts'
import { PROFILE_ROUTES } from '../src/routes/insights-profiles.ts'
import { GROUP_ROUTES } from '../src/routes/groups.ts'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'
import {
  CASES,
  credentialHeaders,
  NOW,
  operationsOf,
  ResponseValidator,
  seedFixture,
  type Credentials,
  type FixtureClients,
  type OpenApiDocument,
} from './openapi-support.ts'

let rt: TestRuntime
let clients: FixtureClients
let app: ReturnType<typeof testApp>
let doc: OpenApiDocument
let validator: ResponseValidator

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000', QUARRY_AUTH_FAILURE_LIMIT: '1000000' })
  clients = await seedFixture(rt)
  app = testApp(rt, { now: () => NOW })
  const res = await app.request('/openapi.json')
  expect(res.status).toBe(200)
  doc = (await res.json()) as OpenApiDocument
  validator = new ResponseValidator(doc)
})

afterAll(async () => {
  await rt?.dispose()
})

const TRAFFIC_ROUTES = ['overview', 'pages/top', 'pages/entry_exit', 'pages/performance', 'traffic/referrers', 'traffic/geo', 'traffic/devices']
const INSIGHTS = ['metrics', 'live', 'pages', ...DIMENSIONS.map((d) => d.name), ...TRAFFIC_ROUTES, ...EVENT_ROUTES, ...PROFILE_ROUTES, ...GROUP_ROUTES, ...PRODUCT_ROUTES]
const isApi = (path: string) => path.startsWith('/insights/') || path.startsWith('/export/')
const ERROR_STATUSES = [400, 401, 403, 404, 414, 429, 500, 503, 504]

describe('the document', () => {
  it('validates as OpenAPI 3.1', async () => {
    const validation = new Validator()
    const result = await validation.validate(doc as never)
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([])
    expect(result.valid).toBe(true)
    expect(validation.version).toBe('3.1')
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.info.title).toBe('Quarry')
  })

  it('describes every route: insights from the dimension registry, export, health', () => {
    const paths = Object.keys(doc.paths)
    for (const name of INSIGHTS) expect(paths).toContain(`/insights/{projectId}/${name}`)
    expect(paths.filter((p) => p.startsWith('/insights/')).sort()).toEqual(INSIGHTS.map((n) => `/insights/{projectId}/${n}`).sort())
    expect(paths).toEqual(expect.arrayContaining(['/healthz', '/readyz']))
    // The export routes are documented once mounted; both are now.
    expect(paths).toEqual(expect.arrayContaining(['/export/events', '/export/charts']))
    // Every documented operation is a GET that the app answers (none is a 404 or 405), and the
    // streamed exports document their HEAD (row count and size estimate without the body).
    const heads = operationsOf(doc).filter(({ method }) => method === 'head').map(({ path }) => path)
    expect(heads.sort()).toEqual(['/export/charts', '/export/events'])
    for (const { method } of operationsOf(doc)) expect(['get', 'head']).toContain(method)
    for (const path of heads) {
      expect(Object.keys(doc.paths[path]!.head!.responses[200]!.headers ?? {})).toEqual(expect.arrayContaining(['X-Quarry-Rows', 'X-Quarry-Size-Estimate']))
    }
  })

  it('declares the credential headers and Basic, and requires them on every API operation', () => {
    expect(doc.components.securitySchemes).toMatchObject({
      clientId: { type: 'apiKey', in: 'header', name: 'openpanel-client-id' },
      clientSecret: { type: 'apiKey', in: 'header', name: 'openpanel-client-secret' },
      basic: { type: 'http', scheme: 'basic' },
    })
    for (const { path, operation } of operationsOf(doc)) {
      if (!isApi(path)) continue
      expect(operation.security, path).toEqual([{ clientId: [], clientSecret: [] }, { basic: [] }])
    }
  })

  it('documents each error status of every API operation as the one envelope', () => {
    expect(doc.components.schemas.Error).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['status', 'error', 'code', 'message', 'requestId']),
    })
    for (const { path, operation } of operationsOf(doc)) {
      if (!isApi(path)) continue
      for (const status of ERROR_STATUSES) {
        expect(operation.responses[status]?.content?.['application/json']?.schema, `${path} ${status}`).toEqual({
          $ref: '#/components/schemas/Error',
        })
      }
    }
  })

  it('lets browsers read every response header it documents', () => {
    const documented = new Set(
      operationsOf(doc).flatMap(({ operation }) => Object.values(operation.responses).flatMap((response) => Object.keys(response.headers ?? {}))),
    )
    expect(documented.size).toBeGreaterThan(5)
    for (const name of documented) expect(EXPOSED_HEADERS, name).toContain(name)
  })

  it('declares every X-Quarry header the source sets in the one list of response headers, which CORS exposes', () => {
    const files = readdirSync('src', { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))
    const named = new Set(files.flatMap((f) => [...readFileSync(join('src', f), 'utf8').matchAll(/'(X-Quarry-[A-Za-z-]+)'/g)].map((m) => m[1]!)))
    expect(named.size).toBeGreaterThan(10)
    for (const name of named) expect(Object.keys(RESPONSE_HEADERS), name).toContain(name)
    expect(EXPOSED_HEADERS).toEqual(Object.keys(RESPONSE_HEADERS))
  })

  it('documents the response headers: pagination, range, rate limit, retry, statistics', () => {
    const names = (path: string, status: number) =>
      Object.keys(doc.paths[path]!.get!.responses[status]!.headers ?? {})
    const common = ['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Server-Timing', 'X-Quarry-Stats']
    for (const name of ['pages', ...DIMENSIONS.map((d) => d.name)]) {
      expect(names(`/insights/{projectId}/${name}`, 200)).toEqual(
        expect.arrayContaining([...common, 'X-Next-Cursor', 'Link', 'X-Quarry-Range', 'X-Quarry-Timezone']),
      )
    }
    expect(names('/insights/{projectId}/pages', 200)).toContain('X-Quarry-Sealed-Until')
    expect(names('/insights/{projectId}/metrics', 200)).toEqual(expect.arrayContaining([...common, 'X-Quarry-Range']))
    expect(names('/export/events', 200)).toEqual(expect.arrayContaining([...common, 'X-Next-Cursor', 'Link', 'X-Quarry-Range']))
    expect(names('/export/charts', 200)).toEqual(expect.arrayContaining([...common, 'X-Quarry-Range']))
    for (const { path } of operationsOf(doc)) {
      if (!isApi(path)) continue
      expect(names(path, 429)).toEqual(expect.arrayContaining(['Retry-After', 'RateLimit-Limit', 'RateLimit-Reset']))
      expect(names(path, 503)).toContain('Retry-After')
    }
    expect(names('/readyz', 503)).toContain('Retry-After')
    // Every shared header reference resolves.
    for (const name of ['X-Request-Id', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) {
      expect(doc.components.headers?.[name], name).toMatchObject({ schema: { type: 'string' } })
    }
  })

  it('lists every error code of the envelope in its description', () => {
    const description = doc.info.description ?? ''
    for (const [code, meaning] of Object.entries(ERROR_CODES)) {
      expect(description).toContain(`\`${code}\``)
      expect(description).toContain(meaning)
    }
  })

  it('documents query parameters with their types, enums, ranges and defaults', () => {
    const param = (path: string, name: string) => doc.paths[path]!.get!.parameters?.find((p) => p.name === name && p.in === 'query')
    expect(doc.paths['/insights/{projectId}/pages']!.get!.parameters).toContainEqual(
      expect.objectContaining({ name: 'projectId', in: 'path', required: true }),
    )
    expect(param('/insights/{projectId}/pages', 'limit')?.schema).toEqual({ type: 'integer', minimum: 1, maximum: 1000, default: 1000 })
    expect(param('/insights/{projectId}/metrics', 'interval')?.schema).toMatchObject({
      type: 'string',
      enum: ['minute', 'hour', 'day', 'week', 'month'],
    })
    expect(param('/insights/{projectId}/country', 'range')?.schema).toMatchObject({ enum: expect.arrayContaining(['7d', '30d', 'custom']) })
    expect(param('/insights/{projectId}/country', 'filters')?.schema).toMatchObject({
      type: 'array',
      items: { $ref: '#/components/schemas/Filter' },
    })
    expect(param('/export/events', 'format')?.schema).toMatchObject({ enum: ['json', 'ndjson', 'csv', 'parquet', 'arrow'], default: 'json' })
    expect(param('/export/charts', 'format')?.schema).toMatchObject({ enum: ['json', 'ndjson', 'csv', 'parquet', 'arrow'], default: 'json' })
    // explain=sql is answered by middleware on every API route, and documented there.
    for (const { path } of operationsOf(doc)) {
      if (isApi(path)) expect(param(path, 'explain')?.schema, path).toEqual({ type: 'string', enum: ['sql'] })
    }
  })
})

// ---------------------------------------------------------------------------------------------

const apiOperations = () => operationsOf(doc).filter(({ path }) => isApi(path))
const caseOf = (path: string) => {
  const found = CASES.get(path)
  if (!found) throw new Error(`no request case for ${path}: add one to CASES`)
  return found
}
const get = (target: typeof app, url: string, who?: Credentials, headers: Record<string, string> = {}, method = 'get') =>
  target.request(url, { method: method.toUpperCase(), headers: { ...(who ? credentialHeaders(who) : {}), ...headers } })

async function expectError(path: string | undefined, res: Response, status: number, code: string, method = 'get') {
  const checked = await validator.check(method, path, res)
  expect(checked.status, checked.text).toBe(status)
  // A HEAD answer has the GET's status and headers, not its body.
  if (method === 'head') return {} as { details?: { path: string; message: string }[]; message: string }
  expect(checked.headers.get('content-type')).toMatch(/^application\/json/)
  expect(checked.body).toMatchObject({ status, code, requestId: res.headers.get('x-request-id') })
  return checked.body as { details?: { path: string; message: string }[]; message: string }
}

describe('real responses match the document', () => {
  it('has a request case for every documented API path', () => {
    for (const { path } of apiOperations()) caseOf(path)
  })

  it('200 for root and read clients, with the documented body and headers', async () => {
    let paginated = 0
    for (const { path, method } of apiOperations()) {
      const c = caseOf(path)
      for (const who of [clients.root, clients.read]) {
        const res = await get(app, c.url('alpha', c.valid), who, {}, method)
        const checked = await validator.check(method, path, res)
        expect(checked.status, `${path}: ${checked.text}`).toBe(200)
        expect(checked.headers.get('ratelimit-limit')).toBe('1000000')
        if (checked.headers.get('x-next-cursor')) paginated++
      }
    }
    // limit=1 over the fixture leaves a next page on most list routes, so those headers were checked too.
    expect(paginated).toBeGreaterThan(10)
  })

  it('explain=sql answers the Explain schema on every API route', async () => {
    for (const { path, method } of apiOperations()) {
      const c = caseOf(path)
      const res = await get(app, c.url('alpha', `${c.valid}&explain=sql`), clients.root, {}, method)
      const checked = await validator.check(method, path, res, { schema: { $ref: '#/components/schemas/Explain' } })
      expect(checked.status, checked.text).toBe(200)
    }
  })

  it('400 lists every invalid parameter at once', async () => {
    for (const { path, method } of apiOperations()) {
      const c = caseOf(path)
      const body = await expectError(path, await get(app, c.url('alpha', c.invalid), clients.root, {}, method), 400, 'invalid_parameters', method)
      if (method === 'head') continue
      const reported = (body.details ?? []).map((d) => d.path.split('.')[0])
      expect(reported, path).toEqual(expect.arrayContaining(c.invalidPaths))
    }
  })

  it('401 without or with wrong credentials, 403 for write clients and foreign projects, 404 for unknown projects', async () => {
    for (const { path, method: m } of apiOperations()) {
      const c = caseOf(path)
      await expectError(path, await get(app, c.url('alpha', c.valid), undefined, {}, m), 401, 'invalid_credentials', m)
      await expectError(path, await get(app, c.url('alpha', c.valid), { id: clients.read.id, secret: 'wrong' }, {}, m), 401, 'invalid_credentials', m)
      await expectError(path, await get(app, c.url('alpha', c.valid), clients.write, {}, m), 403, 'client_type_not_allowed', m)
      await expectError(path, await get(app, c.url('alpha', c.valid), clients.readBeta, {}, m), 403, 'project_forbidden', m)
      await expectError(path, await get(app, c.url('alpha', `${c.valid}&explain=sql`), clients.read, {}, m), 403, 'explain_forbidden', m)
      await expectError(path, await get(app, c.url('nope', c.valid), clients.root, {}, m), 404, 'project_not_found', m)
      await expectError(path, await get(app, c.url('gamma', c.valid), clients.root, {}, m), 404, 'project_not_found', m)
    }
  })

  it('414 when the query string is over 16 KB', async () => {
    for (const { path, method } of apiOperations()) {
      const c = caseOf(path)
      const res = await get(app, c.url('alpha', `${c.valid}&pad=${'x'.repeat(16 * 1024)}`), clients.root, {}, method)
      await expectError(path, res, 414, 'uri_too_long', method)
    }
  })

  it('429 with Retry-After once the client is over its rate limit', async () => {
    const tiny = testApp(rt, { now: () => NOW, config: { ...rt.config, QUARRY_RATE_LIMIT: 1, QUARRY_RATE_WINDOW_S: 3600 } })
    const first = apiOperations()[0]!
    expect((await get(tiny, caseOf(first.path).url('alpha', caseOf(first.path).valid), clients.read)).status).toBe(200)
    for (const { path, method } of apiOperations()) {
      const c = caseOf(path)
      const res = await get(tiny, c.url('alpha', c.valid), clients.read, {}, method)
      await expectError(path, res, 429, 'rate_limited', method)
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(res.headers.get('ratelimit-remaining')).toBe('0')
    }
  })

  it('500, 503 and 504 from real engine failures, with no internals in the body', async () => {
    // The routes' statements are swapped for ones that fail inside ClickHouse; authentication's
    // own lookups run unchanged. The gate queues nothing (some routes run two queries at once).
    const SLOTS = 4
    const gate = createQueryGate({ concurrency: SLOTS, maxQueued: 0 })
    const gated = createQueryRunner(rt.engine, gate, createLogger('silent'))
    let fault: 'none' | 'timeout' | 'internal' = 'none'
    const swap = (stmt: Statement): Statement => {
      if (fault === 'none' || stmt.name === 'client_by_id' || stmt.name === 'project_by_id') return stmt
      return fault === 'timeout'
        ? { name: stmt.name, sql: 'SELECT sum(number) AS n FROM numbers(100000000000)', params: {} }
        : { name: stmt.name, sql: 'SELECT * FROM quarry_no_such_table', params: {} }
    }
    const faulty: QueryRunner = {
      rows: (stmt, opts) => gated.rows(swap(stmt), fault === 'timeout' ? { ...opts, timeoutS: 0.05 } : opts),
      stream: (stmt, format, opts) => gated.stream(swap(stmt), format, opts),
      command: (stmt) => gated.command(stmt),
    }
    const faultApp = testApp(rt, { now: () => NOW, runner: faulty })
    const ops = apiOperations()
    // Verified credentials and projects are cached, so later requests need no lookup.
    for (const { path, method } of ops) {
      const c = caseOf(path)
      expect((await get(faultApp, c.url('alpha', c.valid), clients.root, {}, method)).status).toBe(200)
    }

    fault = 'internal'
    for (const { path, method } of ops) {
      const c = caseOf(path)
      const body = await expectError(path, await get(faultApp, c.url('alpha', c.valid), clients.root, {}, method), 500, 'internal_error', method)
      expect(JSON.stringify(body)).not.toMatch(/quarry_no_such_table|SELECT|UNKNOWN_TABLE|at .*\.ts/i)
    }

    fault = 'timeout'
    for (const { path, method } of ops) {
      const c = caseOf(path)
      const body = await expectError(path, await get(faultApp, c.url('alpha', c.valid), clients.root, {}, method), 504, 'query_timeout', method)
      expect(JSON.stringify(body)).not.toMatch(/numbers|SELECT|max_execution_time/i)
    }

    fault = 'none'
    // A request that failed on one of its parallel queries leaves the others to finish on their own.
    while (gate.active > 0) await new Promise((resolve) => setTimeout(resolve, 10))
    let release: () => void = () => {}
    const busy = new Promise<void>((done) => (release = done))
    const held = Array.from({ length: SLOTS }, () => gate.run(() => busy))
    try {
      for (const { path, method } of ops) {
        const c = caseOf(path)
        const res = await get(faultApp, c.url('alpha', c.valid), clients.root, {}, method)
        await expectError(path, res, 503, 'overloaded', method)
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
      }
    } finally {
      release()
      await Promise.all(held)
    }
  })

  it('405 with Allow and the envelope for other methods; 404 for unknown routes', async () => {
    for (const { path } of operationsOf(doc)) {
      const url = isApi(path) ? caseOf(path).url('alpha') : path
      for (const method of ['POST', 'DELETE']) {
        const res = await app.request(url, { method, headers: credentialHeaders(clients.root) })
        await expectError(undefined, res, 405, 'method_not_allowed', method)
        expect(res.headers.get('allow')).toBe('GET, HEAD')
      }
    }
    await expectError(undefined, await app.request('/nothing/here'), 404, 'not_found')
    await expectError(undefined, await get(app, '/insights/alpha/no_such_dimension', clients.root), 404, 'not_found')
  })

  it('/manage/projects and /manage/projects/{id}: 200 for root, 400, 401, 403 for read and write clients, 404, 429', async () => {
    const manage = [
      ['/manage/projects', '/manage/projects'],
      ['/manage/projects/{id}', '/manage/projects/beta'],
    ] as const
    for (const [path, url] of manage) {
      const checked = await validator.check('get', path, await get(app, url, clients.root))
      expect(checked.status, checked.text).toBe(200)
      await expectError(path, await get(app, `${url}?limit=1`, clients.root), 400, 'invalid_parameters')
      await expectError(path, await get(app, url), 401, 'invalid_credentials')
      await expectError(path, await get(app, url, clients.read), 403, 'client_type_not_allowed')
      await expectError(path, await get(app, url, clients.write), 403, 'client_type_not_allowed')
    }
    await expectError('/manage/projects/{id}', await get(app, '/manage/projects/gamma', clients.root), 404, 'project_not_found')
    const tiny = testApp(rt, { now: () => NOW, config: { ...rt.config, QUARRY_RATE_LIMIT: 1, QUARRY_RATE_WINDOW_S: 3600 } })
    expect((await get(tiny, '/manage/projects', clients.root)).status).toBe(200)
    for (const [path, url] of manage) await expectError(path, await get(tiny, url, clients.root), 429, 'rate_limited')
  })

  it('/healthz and /readyz: 200, and 503 with Retry-After when the engine does not answer', async () => {
    expect((await validator.check('get', '/healthz', await app.request('/healthz'))).body).toEqual({ status: 'ok' })
    expect((await validator.check('get', '/readyz', await app.request('/readyz'))).body).toEqual({ status: 'ready' })

    const port = await closedPort()
    const client = createClient({ url: `http://127.0.0.1:${port}`, request_timeout: 2000, log: { level: ClickHouseLogLevel.OFF } })
    const runner = createQueryRunner(httpEngine(client, 'quarry'), createQueryGate({ concurrency: 2, maxQueued: 2 }), createLogger('silent'))
    try {
      const down = testApp(rt, { runner })
      const res = await down.request('/readyz')
      expect(res.headers.get('retry-after')).toBe('5')
      const checked = await validator.check('get', '/readyz', res)
      expect(checked.status).toBe(503)
      expect((await validator.check('get', '/healthz', await down.request('/healthz'))).status).toBe(200)
    } finally {
      await client.close()
    }
  })

  it("OpenPanel's health routes answer as documented, up and down, ready and shutting down", async () => {
    const body = async (path: string, res: Response, status: number) => {
      const checked = await validator.check('get', path, res)
      expect(checked.status, path).toBe(status)
      return checked.body
    }
    expect(await body('/healthcheck', await app.request('/healthcheck'), 200)).toMatchObject({ ready: true })
    expect(await body('/healthz/live', await app.request('/healthz/live'), 200)).toEqual({ live: true })
    // OpenPanel's documentation paths: the reference page and this document.
    expect((await validator.check('get', '/documentation', await app.request('/documentation'))).status).toBe(200)
    expect(await body('/documentation/json', await app.request('/documentation/json'), 200)).toMatchObject({ openapi: '3.1.0' })
    const stopping = new AbortController()
    const stoppable = testApp(rt, { shutdown: stopping.signal })
    expect(await body('/healthz/ready', await stoppable.request('/healthz/ready'), 200)).toEqual({ ready: true })
    stopping.abort()
    expect(await body('/healthz/ready', await stoppable.request('/healthz/ready'), 503)).toMatchObject({ ready: false })
    const down = testApp(rt, { runner: { ...rt.runner, rows: () => Promise.reject(new Error('down')) } })
    expect(await body('/healthcheck', await down.request('/healthcheck'), 503)).toMatchObject({ ready: false, failedDependencies: ['ch'] })
  })

  it('GET /metrics: 200 in the text format, 401 in the envelope when a token is set and not sent', async () => {
    expect((await validator.check('get', '/metrics', await app.request('/metrics'))).status).toBe(200)
    const guarded = testApp(rt, { config: { ...rt.config, QUARRY_METRICS_TOKEN: 'metrics-token-0123456789' } })
    expect((await validator.check('get', '/metrics', await guarded.request('/metrics'))).status).toBe(401)
  })

  it('exercised every documented status of every operation', () => {
    const missing = operationsOf(doc).flatMap(({ method, path, operation }) =>
      Object.keys(operation.responses)
        .map((status) => `${method.toUpperCase()} ${path} ${status}`)
        .filter((key) => !validator.seen.has(key)),
    )
    expect(missing).toEqual([])
  })
})

/** A local port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
