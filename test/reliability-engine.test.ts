/**
 * Issue 7, HTTP mode against a misbehaving ClickHouse: a stub server on loopback that refuses,
 * hangs, drops or serves (serving by handing each statement to a real embedded engine, so the
 * routes answer real data once it is back). Quarry runs exactly as `serve` builds it for a
 * CLICKHOUSE_URL: httpClientOptions (whose socket timeout outlasts an hour-long export),
 * httpEngine, the gate, the runner, buildApp, and a listening server.
 *
 * Covered here: 503 engine_unavailable with Retry-After and /readyz 503 for refused, dropped and
 * hanging connections; hanging connections answered within the query timeout plus a margin (not
 * the client's hour); recovery without a restart; a disconnect mid-query or mid-stream sends
 * KILL QUERY for that query id and the "server's" process list empties; a query past
 * max_execution_time is a 504; a streamed export that sends nothing within its first-bytes
 * deadline is a 503 and is killed, while one that has begun is left to run; the ClickHouse password
 * never reaches a log line or a body.
 */
import { ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.ts'
import { httpClientOptions, httpEngine } from '../src/clickhouse/engine/http.ts'
import { createQueryGate, type QueryGate } from '../src/clickhouse/gate.ts'
import { createQueryRunner, readDeadlineMs } from '../src/clickhouse/run.ts'
import type { Config } from '../src/config.ts'
import { createLogger } from '../src/log.ts'
import { listen } from '../src/server.ts'
import { openTestRuntime, testApp, testConfig, type TestRuntime } from './helpers/runtime.ts'
import { credentialHeaders, NOW, seedFixture, type FixtureClients } from './openapi-support.ts'
import { StubClickHouse, proxyTo, type ProxyAnswer, type StubQuery, type TextAnswer } from './support/stub-clickhouse.ts'

const PASSWORD = 'ch-pass-7f3a9c1e5b'
const QUERY_TIMEOUT_S = 1

let rt: TestRuntime
let clients: FixtureClients
let stub: StubClickHouse
let quarry: Quarry
let gate: QueryGate
let base: string
const logLines: string[] = []
const logger = createLogger('debug', { write: (line: string) => void logLines.push(line) })

/** Statements the stub should treat as long-running, per test. */
let slowWhen: (q: StubQuery) => boolean = () => false
/** How the stub sends what the engine answered, per test. */
let deliver: (q: StubQuery, answer: TextAnswer) => ProxyAnswer = (_q, answer) => answer

interface Quarry {
  base: string
  gate: QueryGate
  config: Config
  close(): Promise<void>
}

/** Quarry as `serve` builds it for CLICKHOUSE_URL pointing at the stub, listening on loopback. */
async function startQuarry(overrides: Record<string, string>): Promise<Quarry> {
  const config = testConfig({
    CLICKHOUSE_URL: stub.url,
    CLICKHOUSE_PASSWORD: PASSWORD,
    QUARRY_RATE_LIMIT: '1000000',
    QUARRY_AUTH_FAILURE_LIMIT: '1000000',
    ...overrides,
  })
  const client = createClient({ ...httpClientOptions(config, stub.url), log: { level: ClickHouseLogLevel.OFF } })
  const quarryGate = createQueryGate({ concurrency: config.QUARRY_MAX_CONCURRENT_QUERIES, maxQueued: config.QUARRY_MAX_QUEUED_QUERIES })
  const engine = httpEngine(client, config.CLICKHOUSE_DATABASE, config.QUARRY_STREAM_FIRST_BYTE_TIMEOUT_MS)
  const runner = createQueryRunner(engine, quarryGate, logger)
  const app = buildApp({ config, runner, logger, signingKey: rt.signingKey, now: () => NOW })
  const server = await listen(app, '127.0.0.1', 0)
  return {
    base: `http://127.0.0.1:${server.port}`,
    gate: quarryGate,
    config,
    async close() {
      await server.shutdown(500)
      await client.close()
    },
  }
}

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000', QUARRY_AUTH_FAILURE_LIMIT: '1000000' })
  clients = await seedFixture(rt)
  const fromEngine = proxyTo(async (sql, params) => {
    const result = await rt.engine.client.exec({ query: sql, query_params: params })
    let text = ''
    for await (const chunk of result.stream) text += chunk
    return text
  })
  stub = await new StubClickHouse({ slow: (q) => slowWhen(q), proxy: async (q) => deliver(q, await fromEngine(q)) }).start()

  quarry = await startQuarry({
    QUARRY_QUERY_TIMEOUT_S: String(QUERY_TIMEOUT_S),
    // Every request asks the engine about its credentials, so an outage shows on the first query.
    QUARRY_AUTH_CACHE_TTL_S: '0',
    QUARRY_PROJECT_CACHE_TTL_S: '0',
  })
  gate = quarry.gate
  base = quarry.base
  // The client's own socket timeout is for hour-long exports: it must not be what ends a read.
  expect(httpClientOptions(quarry.config, stub.url).request_timeout).toBeGreaterThan(3600_000)
}, 120_000)

afterAll(async () => {
  await quarry?.close()
  await stub?.close()
  await rt?.dispose()
})

beforeEach(async () => {
  slowWhen = () => false
  deliver = (_q, answer) => answer
  await stub.setMode('serve')
})

const get = (path: string, init: RequestInit = {}, origin = base) =>
  fetch(`${origin}${path}`, { ...init, headers: { ...credentialHeaders(clients.root), ...(init.headers as Record<string, string>) } })

async function until(condition: () => boolean, ms: number, what: string) {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

const isExportQuery = (q: StubQuery) => q.sql.includes('FORMAT JSONEachRow') && /FROM\s+events/i.test(q.sql) && !/count\(\)/i.test(q.sql)
const isKillOf = (queryId: string) => (q: StubQuery) => /^\s*KILL\s+QUERY/i.test(q.sql) && q.params.id === queryId

/** The engine's answer as a server streams it: its first line after `firstMs`, the rest `restMs` later. */
function paced(answer: TextAnswer, firstMs: number, restMs: number): ProxyAnswer {
  const cut = answer.body.indexOf('\n') + 1
  async function* pieces() {
    await sleep(firstMs)
    yield answer.body.slice(0, cut)
    await sleep(restMs)
    yield answer.body.slice(cut)
  }
  return { ...answer, body: pieces() }
}

/** Routes that each reach the engine in a different way (rows, two queries, a stream). */
const ROUTES = [
  '/insights/alpha/metrics',
  '/insights/alpha/pages',
  '/export/events?projectId=alpha',
  '/export/events?projectId=alpha&format=ndjson',
  `/export/charts?projectId=alpha&series=${encodeURIComponent('[{"name":"screen_view"}]')}`,
]

/** Returns how long the answer took. */
async function expectUnavailable(path: string, withinMs: number, origin = base): Promise<number> {
  const started = performance.now()
  const res = await get(path, {}, origin)
  const elapsed = performance.now() - started
  const text = await res.text()
  expect(res.status, `${path}: ${text}`).toBe(503)
  const body = JSON.parse(text) as Record<string, unknown>
  expect(body).toMatchObject({ status: 503, code: 'engine_unavailable', requestId: res.headers.get('x-request-id') })
  expect(res.headers.get('retry-after')).toBe('5')
  expect(elapsed, `${path} answered after ${Math.round(elapsed)} ms`).toBeLessThan(withinMs)
  expect(text).not.toContain(PASSWORD)
  return elapsed
}

async function expectReady(ready: boolean) {
  const res = await fetch(`${base}/readyz`)
  expect(res.status).toBe(ready ? 200 : 503)
  if (!ready) expect(res.headers.get('retry-after')).toBe('5')
}

/** What the embedded engine answers for the same request: the HTTP engine must say the same. */
async function expectRealAnswers() {
  const embedded = testApp(rt, { now: () => NOW })
  for (const path of ROUTES) {
    const res = await get(path)
    const text = await res.text()
    expect(res.status, `${path}: ${text}`).toBe(200)
    const direct = await (await embedded.request(path, { headers: credentialHeaders(clients.root) })).text()
    expect(text).toBe(direct)
  }
}

describe('a ClickHouse server that serves', () => {
  it('answers every route as the embedded engine does, through the real HTTP client', async () => {
    await expectReady(true)
    await expectRealAnswers()
  })
})

describe('engine faults: 503 engine_unavailable, /readyz 503, recovery on its own', () => {
  for (const mode of ['refuse', 'drop'] as const) {
    it(`${mode}: every route answers 503 at once; back to 200 as soon as the server serves again`, async () => {
      await stub.setMode(mode)
      for (const path of ROUTES) await expectUnavailable(path, 2000)
      await expectReady(false)
      expect((await fetch(`${base}/healthz`)).status).toBe(200)

      await stub.setMode('serve')
      await expectReady(true)
      await expectRealAnswers()
      expect(gate.active + gate.queued).toBe(0)
    })
  }

  it('hang: a server that accepts and never answers costs a request the query timeout plus a margin, not the client socket timeout', async () => {
    await stub.setMode('hang')
    // The first query of each request is the credential lookup, whose own limit is 5 s; the route's
    // query would have QUARRY_QUERY_TIMEOUT_S. Either way: its limit plus a margin, then 503.
    const bound = readDeadlineMs(Math.max(5, QUERY_TIMEOUT_S)) + 1500
    await Promise.all(ROUTES.slice(0, 3).map((path) => expectUnavailable(path, bound)))
    // /readyz uses its own 2 s limit.
    const started = performance.now()
    await expectReady(false)
    expect(performance.now() - started).toBeLessThan(readDeadlineMs(2) + 1500)
    // Nothing is left holding the gate.
    await until(() => gate.active + gate.queued === 0, 2000, 'the gate to empty')

    await stub.setMode('serve')
    await expectReady(true)
    await expectRealAnswers()
  })

  it('restarts in a row, with requests all along: every answer is a 200 or a 503, and the last ones are 200', async () => {
    const statuses = new Map<number, number>()
    for (const mode of ['refuse', 'serve', 'drop', 'serve', 'refuse', 'serve'] as const) {
      await stub.setMode(mode)
      const responses = await Promise.all(ROUTES.map((path) => get(path)))
      for (const res of responses) {
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        await res.arrayBuffer()
      }
    }
    expect([...statuses.keys()].sort()).toEqual([200, 503])
    await expectRealAnswers()
  })
})

describe('cancellation over HTTP', () => {
  const isMetricsQuery = (q: StubQuery) => /FROM\s+sessions/i.test(q.sql) && q.sql.includes('max_execution_time')

  for (const [what, path, predicate] of [
    ['a dashboard query (runner.rows)', '/insights/alpha/metrics', isMetricsQuery],
    ['a streamed export (runner.stream)', '/export/events?projectId=alpha&format=ndjson', isExportQuery],
  ] as const) {
    it(`${what}: a client that disconnects gets its query killed by id, and the server's process list empties`, async () => {
      slowWhen = predicate
      const killsBefore = stub.kills.length
      const abort = new AbortController()
      const pending = get(path, { signal: abort.signal }).catch((err: Error) => err)
      await until(() => stub.running().length === 1, 5000, 'the query to run')
      const [query] = stub.running()
      // Left alone, the "server" would run it until max_execution_time.
      expect(query!.sql).toMatch(/max_execution_time = (1|3600),/)
      abort.abort()
      await pending
      await until(() => stub.running().length === 0, 2000, 'system.processes to empty')
      expect(stub.kills.slice(killsBefore)).toEqual([query!.queryId])
      expect(stub.outcomes.get(query!.queryId)).toBe('killed')
      await until(() => gate.active + gate.queued === 0, 2000, 'the gate slot to be released')
      // The server stays usable.
      slowWhen = () => false
      expect((await get('/insights/alpha/metrics')).status).toBe(200)
    })
  }

  it('a query past max_execution_time is a 504 query_timeout, and nothing is killed', async () => {
    slowWhen = isMetricsQuery
    const killsBefore = stub.kills.length
    const started = performance.now()
    const res = await get('/insights/alpha/metrics')
    const body = (await res.json()) as Record<string, unknown>
    expect(res.status).toBe(504)
    expect(body).toMatchObject({ status: 504, code: 'query_timeout' })
    expect(performance.now() - started).toBeGreaterThanOrEqual(QUERY_TIMEOUT_S * 1000 - 50)
    expect(performance.now() - started).toBeLessThan(readDeadlineMs(QUERY_TIMEOUT_S))
    expect(stub.kills.length).toBe(killsBefore)
    expect(stub.running()).toEqual([])
  })
})

describe('a streamed export over HTTP: a deadline for its first bytes', () => {
  const FIRST_BYTES_MS = 300
  const EXPORT_TIMEOUT_S = 20
  const STREAM = '/export/events?projectId=alpha&format=ndjson'
  // Well before the export's max_execution_time, and before the client's socket timeout beyond it.
  const ANSWER_WITHIN_MS = FIRST_BYTES_MS + 1500
  let timed: Quarry

  beforeAll(async () => {
    timed = await startQuarry({
      QUARRY_STREAM_FIRST_BYTE_TIMEOUT_MS: String(FIRST_BYTES_MS),
      QUARRY_EXPORT_TIMEOUT_S: String(EXPORT_TIMEOUT_S),
    })
    // Credentials and project are cached from here on, so the export's own query is the only one
    // that meets a server gone silent.
    const warm = await get('/export/events?projectId=alpha&limit=1', {}, timed.base)
    expect(warm.status).toBe(200)
    await warm.arrayBuffer()
  })

  afterAll(() => timed?.close())

  /** The id of the export's query among what the stub received since `seen`. */
  const exportQueryId = (seen: number) => {
    const query = stub.received.slice(seen).find(isExportQuery)
    expect(query).toBeDefined()
    return query!.queryId
  }

  it('hang: 503 engine_unavailable with Retry-After once the deadline passes, not after max_execution_time; the query is killed by id', async () => {
    await stub.setMode('hang')
    const seen = stub.received.length
    const elapsed = await expectUnavailable(STREAM, ANSWER_WITHIN_MS, timed.base)
    expect(elapsed).toBeGreaterThanOrEqual(FIRST_BYTES_MS)
    const queryId = exportQueryId(seen)
    await until(() => stub.received.some(isKillOf(queryId)), 2000, 'KILL QUERY for the export')
    await until(() => timed.gate.active + timed.gate.queued === 0, 2000, 'the gate slot to be released')
  })

  it('headers, then silence: the same 503 once the deadline passes, and a kill', async () => {
    deliver = (q, answer) => (isExportQuery(q) ? paced(answer, FIRST_BYTES_MS * 3, 0) : answer)
    const seen = stub.received.length
    const killsBefore = stub.kills.length
    const elapsed = await expectUnavailable(STREAM, ANSWER_WITHIN_MS, timed.base)
    expect(elapsed).toBeGreaterThanOrEqual(FIRST_BYTES_MS)
    const queryId = exportQueryId(seen)
    await until(() => stub.kills.length > killsBefore, 2000, 'KILL QUERY for the export')
    expect(stub.kills.slice(killsBefore)).toEqual([queryId])
  })

  it('a stream that has begun is not cut by the deadline, even pausing longer than it', async () => {
    const embedded = testApp(rt, { now: () => NOW })
    const direct = await (await embedded.request(STREAM, { headers: credentialHeaders(clients.root) })).text()
    // The pause falls between the first line and the rest, so there must be a rest.
    expect(direct.split('\n').filter(Boolean).length).toBeGreaterThan(1)
    const pauseMs = FIRST_BYTES_MS * 3
    deliver = (q, answer) => (isExportQuery(q) ? paced(answer, 0, pauseMs) : answer)
    const killsBefore = stub.kills.length
    const started = performance.now()
    const res = await get(STREAM, {}, timed.base)
    const text = await res.text()
    expect(res.status, text).toBe(200)
    expect(text).toBe(direct)
    expect(performance.now() - started).toBeGreaterThanOrEqual(pauseMs)
    expect(stub.kills.length).toBe(killsBefore)
  })
})

describe('secrets', () => {
  it('the ClickHouse password and client secrets never reach a log line, through all the faults above', () => {
    const log = logLines.join('')
    expect(log).toContain('query failed')
    const basic = Buffer.from(`default:${PASSWORD}`).toString('base64')
    for (const leak of [PASSWORD, basic, clients.root.secret, clients.read.secret]) expect(log).not.toContain(leak)
  })
})
