/**
 * Issue 7 on the embedded engine: time limits on every statement and on the HTTP server, read-only
 * reads, cancellation on disconnect (watched in system.processes), the gate's bounded queue, and
 * secrets kept out of logs and bodies.
 *
 * Elsewhere: 504 query_timeout from a real slow query (errors.test.ts) and over HTTP
 * (reliability-engine.test.ts); 503 overloaded through the app (errors.test.ts); an engine error is
 * a 500 envelope with the request id (errors-internal.test.ts); exports that a client abandons
 * (heavy/export-events-stream.test.ts); logs and bodies free of client secrets (auth.test.ts);
 * `clients list` without secrets or hashes (cli.test.ts).
 */
import { Session } from 'chdb'
import { existsSync } from 'node:fs'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createQueryGate, OverloadedError } from '../src/clickhouse/gate.ts'
import { EngineQueryError } from '../src/clickhouse/errors.ts'
import { createQueryRunner, type QueryRunner, type RunOptions, type Statement } from '../src/clickhouse/run.ts'
import { seedWithProject } from '../src/cli/seed.ts'
import { admissionLimit } from '../src/http/admission.ts'
import { createLogger, REDACTED_PATHS } from '../src/log.ts'
import { createProject } from '../src/projects.ts'
import { listen, type RunningServer } from '../src/server.ts'
import { openTestRuntime, testApp, testConfig, type TestRuntime } from './helpers/runtime.ts'
import { CASES, credentialHeaders, NOW, seedFixture, type FixtureClients, type OpenApiDocument, operationsOf } from './openapi-support.ts'

let rt: TestRuntime
let clients: FixtureClients
let server: RunningServer
let base: string
/** A chDB session of its own: the shared connection runs one query at a time, and may be busy. */
let observer: Session

const BIG = 'big'
const BIG_EVENTS = 800_000

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000', QUARRY_AUTH_FAILURE_LIMIT: '1000000' })
  clients = await seedFixture(rt)
  // A project in org-a large enough that its heavier queries run for a while.
  await createProject(rt.runner, { id: BIG, name: 'Big', timezone: 'UTC', organizationId: 'org-a' })
  await seedWithProject(rt, { projectId: BIG, events: BIG_EVENTS, days: 30, seed: 7, end: NOW })
  server = await listen(testApp(rt, { now: () => NOW }), '127.0.0.1', 0)
  base = `http://127.0.0.1:${server.port}`
  observer = new Session(rt.dir)
}, 180_000)

afterAll(async () => {
  observer?.close()
  await server?.shutdown(500)
  await rt?.dispose()
})

async function until(condition: () => boolean | Promise<boolean>, ms: number, what: string) {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

interface Process {
  elapsed: number
  is_cancelled: number
  log_comment: string
  query: string
}

/** What system.processes lists, besides this very query. */
async function processes(): Promise<Process[]> {
  const result = await observer.queryAsync(
    `SELECT elapsed, is_cancelled, Settings['log_comment'] AS log_comment, query FROM system.processes
     WHERE query NOT LIKE '%system.processes%' FORMAT JSONEachRow`,
  )
  return result
    .text()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Process)
}

/** Queries still at work: chDB keeps a killed query's entry (is_cancelled = 1) until the connection's next query. */
const working = async () => (await processes()).filter((p) => p.is_cancelled === 0)

/** Every route of the OpenAPI document with a request that reaches its queries (its valid case in openapi-support.ts). */
async function everyRoute(app: ReturnType<typeof testApp>): Promise<string[]> {
  const doc = (await (await app.request('/openapi.json')).json()) as OpenApiDocument
  return operationsOf(doc)
    .filter(({ path }) => path.startsWith('/insights/') || path.startsWith('/export/'))
    .flatMap(({ path }) => {
      const route = CASES.get(path)
      if (!route) throw new Error(`no request case for ${path} in test/openapi-support.ts`)
      // A streamed export too: it reads through another runner call than a page does.
      return path === '/export/events' ? [route.url('alpha', route.valid), route.url('alpha', 'format=csv')] : [route.url('alpha', route.valid)]
    })
}

interface Call {
  kind: 'rows' | 'stream' | 'command'
  name: string
  opts?: RunOptions
}

function spyRunner(inner: QueryRunner, calls: Call[]): QueryRunner {
  return {
    rows: (stmt: Statement, opts: RunOptions) => {
      calls.push({ kind: 'rows', name: stmt.name, opts })
      return inner.rows(stmt, opts)
    },
    stream: (stmt: Statement, format: string, opts: RunOptions) => {
      calls.push({ kind: 'stream', name: stmt.name, opts })
      return inner.stream(stmt, format, opts)
    },
    command: (stmt: Statement) => {
      calls.push({ kind: 'command', name: stmt.name })
      return inner.command(stmt)
    },
  }
}

const LOOKUPS = new Set(['client_by_id', 'project_by_id'])

/** A runner whose route queries wait until released; the credential and project lookups do not. */
function heldRunner(): { runner: QueryRunner; release: () => void } {
  let release: () => void = () => {}
  const held = new Promise<void>((r) => (release = r))
  const runner: QueryRunner = {
    ...rt.runner,
    rows: async (stmt, opts) => {
      if (!LOOKUPS.has(stmt.name)) await held
      return rt.runner.rows(stmt, opts)
    },
  }
  return { runner, release }
}

describe('time limits', () => {
  it('every statement of every route carries max_execution_time: dashboard and page limits for reads, the export limit for streams, both configurable', async () => {
    const calls: Call[] = []
    const config = { ...rt.config, QUARRY_QUERY_TIMEOUT_S: 7, QUARRY_EXPORT_TIMEOUT_S: 1234 }
    const app = testApp(rt, { now: () => NOW, config, runner: spyRunner(rt.runner, calls) })
    const urls = await everyRoute(app)
    expect(urls.length).toBeGreaterThanOrEqual(26)
    for (const url of urls) {
      const before = calls.length
      const res = await app.request(url, { headers: credentialHeaders(clients.root) })
      expect(res.status, url).toBe(200)
      await res.arrayBuffer()
      const mine = calls.slice(before)
      expect(mine.length, url).toBeGreaterThan(0)
      for (const call of mine) {
        expect(call.kind, `${url}: ${call.name}`).not.toBe('command')
        // Credential and project lookups have short limits of their own.
        const limit = LOOKUPS.has(call.name) ? 5 : call.kind === 'stream' ? 1234 : 7
        expect(call.opts!.timeoutS, `${url}: ${call.name}`).toBe(limit)
        expect(call.opts!.readonly, `${url}: ${call.name}`).not.toBe(false)
      }
    }
    // The text sent says so (explain=sql shows exactly what the runner would send, bar the query id).
    const explained = (await (
      await app.request('/insights/alpha/pages?explain=sql', { headers: credentialHeaders(clients.root) })
    ).json()) as { sql: string[] }
    for (const sql of explained.sql) expect(sql).toMatch(/SETTINGS .*max_execution_time = 7\b.*readonly = 2/)
    const stream = (await (
      await app.request('/export/events?projectId=alpha&format=ndjson&explain=sql', { headers: credentialHeaders(clients.root) })
    ).json()) as { sql: string[] }
    expect(stream.sql.join('\n')).toMatch(/max_execution_time = 1234\b/)
  })

  it('the defaults: 10 s for dashboards, 1 h for exports', () => {
    const config = testConfig()
    expect(config.QUARRY_QUERY_TIMEOUT_S).toBe(10)
    expect(config.QUARRY_EXPORT_TIMEOUT_S).toBe(3600)
  })

  it('the HTTP server bounds how long a request head and a request may take to arrive, not how long a response streams', () => {
    const http = server.server as import('node:http').Server
    expect(http.headersTimeout).toBe(10_000)
    expect(http.requestTimeout).toBe(30_000)
    expect(http.headersTimeout).toBeLessThanOrEqual(http.requestTimeout)
  })
})

describe('read-only', () => {
  const writes = [
    'INSERT INTO events (project_id, name) SELECT project_id, name FROM events LIMIT 1',
    'DROP TABLE events',
    'TRUNCATE TABLE events',
    "ALTER TABLE events DELETE WHERE project_id = 'alpha'",
    "ALTER TABLE events UPDATE path = 'x' WHERE 1",
    'CREATE TABLE pwned (x UInt8) ENGINE = Memory',
    // readonly = 2 in the SELECT's SETTINGS does not stop these two (see assertReadStatement).
    "INSERT INTO FUNCTION file('quarry-pwned.csv', 'CSV', 'x UInt8') SELECT 1",
    "SELECT 1 INTO OUTFILE 'quarry-pwned.csv'",
    '/* a comment first */ -- and another\n DROP TABLE events',
    'SELECT 1 SETTINGS readonly = 0',
    'SYSTEM DROP MARK CACHE',
  ]

  it('a write statement sent the way the routes send theirs (runner.rows, default options) is refused by ClickHouse', async () => {
    const count = async () => (await rt.runner.rows<{ n: number }>({ name: 'n', sql: 'SELECT count() AS n FROM events', params: {} }, { timeoutS: 10 }))[0]!.n
    const before = await count()
    for (const sql of writes) {
      const err = await rt.runner.rows({ name: 'hostile', sql, params: {} }, { timeoutS: 10 }).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err, sql).toBeInstanceOf(EngineQueryError)
      // 164 READONLY: the setting refused it, not a parse error.
      expect((err as EngineQueryError).clickhouseCode, `${sql}: ${(err as Error).message}`).toBe('164')
    }
    expect(await count()).toBe(before)
    const tables = await rt.runner.rows<{ name: string }>({ name: 't', sql: "SELECT name FROM system.tables WHERE database = currentDatabase() AND name = 'pwned'", params: {} }, { timeoutS: 10 })
    expect(tables).toEqual([])
    expect(existsSync('quarry-pwned.csv')).toBe(false)
    // Streams (exports) go through the same check.
    const stream = rt.runner.stream({ name: 'hostile', sql: "INSERT INTO FUNCTION file('quarry-pwned.csv', 'CSV', 'x UInt8') SELECT 1", params: {} }, 'CSV', { timeoutS: 10 })
    await expect(
      (async () => {
        for await (const _ of stream) void _
      })(),
    ).rejects.toMatchObject({ clickhouseCode: '164' })
    expect(existsSync('quarry-pwned.csv')).toBe(false)
    // The same statement without the setting (what the CLI's writes use) does run: the refusal is readonly's.
    await rt.runner.command({ name: 'ok', sql: 'CREATE TABLE pwned (x UInt8) ENGINE = Memory', params: {} })
    await rt.runner.command({ name: 'ok', sql: 'DROP TABLE pwned', params: {} })
  })
})

// Fifty patterns, each tried on every view of the window before the pages are ranked.
const HEAVY_FILTERS = [
  { name: 'properties.__title', operator: 'regex', value: [...Array.from({ length: 49 }, (_, i) => `^(never|${i})+ [a-z]+$`), '.'] },
]

describe('cancellation on the embedded engine, watched in system.processes', () => {
  const heavy = [
    ['a dashboard query', `/insights/${BIG}/pages?range=30d&filters=${encodeURIComponent(JSON.stringify(HEAVY_FILTERS))}`],
    ['a streamed export', `/export/events?projectId=${BIG}&format=csv&start=2024-05-01`],
  ] as const

  for (const [what, path] of heavy) {
    it(`${what}: the client disconnects mid-query and the engine stops at once, gate slot and connection free`, async () => {
      // Left alone, a query takes this long (an export of 800k events, many seconds: not measured).
      const streaming = path.startsWith('/export/events')
      const fullStarted = performance.now()
      if (!streaming) {
        const full = await fetch(`${base}${path}`, { headers: credentialHeaders(clients.root) })
        expect(full.status).toBe(200)
        await full.arrayBuffer()
      }
      const fullMs = streaming ? 10_000 : performance.now() - fullStarted
      expect(fullMs).toBeGreaterThan(1000)

      expect(await working()).toEqual([])
      const abort = new AbortController()
      const pending = fetch(`${base}${path}`, { headers: credentialHeaders(clients.root), signal: abort.signal })
        .then(async (res) => {
          // A stream answers at once: read a little of it, then walk away.
          const reader = res.body!.getReader()
          await reader.read()
          return 'streaming'
        })
        .catch(() => 'aborted')
      // The route's query shows up, tagged with its query id.
      await until(async () => (await working()).some((p) => /^[0-9a-f-]{36}$/.test(p.log_comment) && p.query.includes(BIG)), 10_000, 'the query in system.processes')
      await new Promise((r) => setTimeout(r, 150))
      const [running] = await working()
      abort.abort()
      await pending
      const stopped = performance.now()
      await until(async () => (await working()).length === 0, 3000, 'system.processes to empty')
      const stopMs = performance.now() - stopped
      // Stopped, not finished: well before the query would have run its course.
      expect(running!.elapsed * 1000 + stopMs).toBeLessThan(fullMs * 0.6)
      await until(() => rt.gate.active + rt.gate.queued === 0, 3000, 'the gate to empty')
      // The shared connection is free at once: a small query does not wait for the abandoned one.
      const started = performance.now()
      const live = await fetch(`${base}/insights/${BIG}/live`, { headers: credentialHeaders(clients.root) })
      expect(live.status).toBe(200)
      expect(performance.now() - started).toBeLessThan(2000)
      expect(running!.elapsed).toBeGreaterThan(0)
    })
  }
})

describe('cancellation of a stream nobody reads any more', () => {
  it('an abort frees the gate slot and stops the engine even when the consumer never asks for the next block', async () => {
    const abort = new AbortController()
    const stream = rt.runner.stream(
      { name: 'abandoned', sql: 'SELECT * FROM events WHERE project_id = {p:String} ORDER BY created_at', params: { p: BIG } },
      'JSONEachRow',
      { timeoutS: 60, signal: abort.signal },
    )
    const iterator = stream[Symbol.asyncIterator]()
    expect((await iterator.next()).done).toBe(false)
    expect(rt.gate.active).toBe(1)
    await until(async () => (await working()).length === 1, 5000, 'the stream in system.processes')
    // The consumer goes away without returning the iterator (a client gone before the response began).
    abort.abort()
    await until(() => rt.gate.active === 0, 2000, 'the slot to be released')
    await until(async () => (await working()).length === 0, 3000, 'system.processes to empty')
  })
})

describe('admission control', () => {
  it('the gate admits `concurrency` tasks, queues at most `maxQueued`, refuses the rest at once and lets none linger', async () => {
    const gate = createQueryGate({ concurrency: 2, maxQueued: 3 })
    const release: (() => void)[] = []
    let maxQueued = 0
    const outcomes = Array.from({ length: 1000 }, () =>
      gate
        .run(
          () =>
            new Promise<void>((resolve) => {
              release.push(resolve)
            }),
        )
        .then(
          () => 'ran',
          (err: unknown) => (err instanceof OverloadedError ? 'refused' : 'other'),
        )
        .finally(() => (maxQueued = Math.max(maxQueued, gate.queued))),
    )
    await new Promise((r) => setTimeout(r, 10))
    expect(gate.active).toBe(2)
    expect(gate.queued).toBe(3)
    while (release.length > 0 || gate.active > 0) {
      release.splice(0).forEach((done) => done())
      await new Promise((r) => setTimeout(r, 1))
    }
    const counts = (await Promise.all(outcomes)).reduce<Record<string, number>>((acc, o) => ({ ...acc, [o]: (acc[o] ?? 0) + 1 }), {})
    expect(counts).toEqual({ ran: 5, refused: 995 })
    expect(maxQueued).toBeLessThanOrEqual(3)
    expect(gate.active + gate.queued).toBe(0)
  })

  it('no task waits for a slot longer than maxWaitMs; once the gate knows its pace, one that would is refused on arrival', async () => {
    const gate = createQueryGate({ concurrency: 1, maxQueued: 50, maxWaitMs: 350 })
    const sleep = (ms: number) => () => new Promise<string>((r) => setTimeout(() => r('ran'), ms))
    const outcome = (p: Promise<string>) => p.catch((e: Error) => (e instanceof OverloadedError ? `refused: ${e.message}` : 'other'))
    // One slot, tasks of 100 ms: the fifth would start after ~400 ms.
    const started = performance.now()
    const first = await Promise.all(Array.from({ length: 6 }, () => outcome(gate.run(sleep(100)))))
    expect(first.slice(0, 4)).toEqual(['ran', 'ran', 'ran', 'ran'])
    expect(first.slice(4).every((o) => o.startsWith('refused: no query slot within 350 ms'))).toBe(true)
    expect(performance.now() - started).toBeLessThan(1000)
    // It has measured ~100 ms per task while busy: with three waiting, another is refused at once.
    await new Promise((r) => setTimeout(r, 20))
    const busy: Promise<string>[] = []
    for (let i = 0; i < 4; i++) {
      busy.push(outcome(gate.run(sleep(100))))
      await new Promise((r) => setTimeout(r, 1))
    }
    expect(gate.active).toBe(1)
    expect(gate.queued).toBe(3)
    const arrival = performance.now()
    expect(await outcome(gate.run(sleep(100)))).toMatch(/^refused: the queue would not reach this query within 350 ms/)
    expect(performance.now() - arrival).toBeLessThan(50)
    expect(await Promise.all(busy)).toEqual(['ran', 'ran', 'ran', 'ran'])
    await new Promise((r) => setTimeout(r, 50))
    expect(gate.active + gate.queued).toBe(0)
  })

  it('requests in progress are capped before any work: past 2 × (slots + queue) a 503 overloaded at once, /healthz exempt', async () => {
    const { runner: blocking, release } = heldRunner()
    const config = { ...rt.config, QUARRY_MAX_CONCURRENT_QUERIES: 1, QUARRY_MAX_QUEUED_QUERIES: 1 }
    expect(admissionLimit(config)).toBe(4)
    const app = testApp(rt, { now: () => NOW, config, runner: blocking })
    const headers = credentialHeaders(clients.root)
    const inFlight = Array.from({ length: 4 }, (_, i) => app.request(`/insights/alpha/pages?limit=${i + 1}`, { headers }))
    await new Promise((r) => setTimeout(r, 100))
    const started = performance.now()
    const refused = await app.request('/insights/alpha/metrics', { headers })
    expect(performance.now() - started).toBeLessThan(100)
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(await refused.json()).toMatchObject({ status: 503, code: 'overloaded', requestId: refused.headers.get('x-request-id') })
    expect((await app.request('/healthz')).status).toBe(200)
    release()
    expect((await Promise.all(inFlight)).map((r) => r.status)).toEqual([200, 200, 200, 200])
    expect((await app.request('/insights/alpha/metrics', { headers })).status).toBe(200)
  })

  it('a burst of 400 requests on a one-slot gate: a few answered, the rest 503 overloaded with Retry-After, all at once; then idle', async () => {
    const config = { ...rt.config, QUARRY_MAX_CONCURRENT_QUERIES: 1, QUARRY_MAX_QUEUED_QUERIES: 4 }
    const gate = createQueryGate({ concurrency: 1, maxQueued: 4 })
    const app = testApp(rt, { now: () => NOW, config, runner: createQueryRunner(rt.engine, gate, createLogger('silent')) })
    // Credentials and the project are looked up once, then cached.
    expect((await app.request(`/insights/${BIG}/metrics`, { headers: credentialHeaders(clients.root) })).status).toBe(200)
    const started = performance.now()
    const responses = await Promise.all(
      Array.from({ length: 400 }, () => app.request(`/insights/${BIG}/metrics?range=30d`, { headers: credentialHeaders(clients.root) })),
    )
    const elapsed = performance.now() - started
    const statuses = responses.map((r) => r.status)
    const ok = statuses.filter((s) => s === 200).length
    expect(ok).toBeGreaterThanOrEqual(1)
    expect(ok).toBeLessThanOrEqual(5 + 5)
    expect(statuses.filter((s) => s === 503).length).toBe(400 - ok)
    for (const res of responses.filter((r) => r.status === 503).slice(0, 5)) {
      expect(res.headers.get('retry-after')).toBe('1')
      expect(await res.json()).toMatchObject({ code: 'overloaded' })
    }
    // Refusals cost nothing: the whole burst takes about as long as the few admitted queries.
    expect(elapsed).toBeLessThan(30_000)
    expect(gate.active + gate.queued).toBe(0)
  })
})

describe('graceful shutdown of the HTTP server', () => {
  it('lets the response in flight finish, closes its kept-alive connection after it, serves nothing new, and resolves as soon as it is done', async () => {
    const { runner: blocking, release } = heldRunner()
    const running = await listen(testApp(rt, { now: () => NOW, runner: blocking }), '127.0.0.1', 0)
    const auth = Object.entries(credentialHeaders(clients.root)).map(([k, v]) => `${k}: ${v}\r\n`).join('')
    const socket = connect(running.port, '127.0.0.1')
    let received = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (received += chunk))
    const closed = new Promise<void>((r) => socket.once('close', () => r()))
    await new Promise<void>((r) => socket.once('connect', () => r()))
    socket.write(`GET /insights/alpha/metrics HTTP/1.1\r\nHost: q\r\n${auth}\r\n`)
    await new Promise((r) => setTimeout(r, 100))
    const started = performance.now()
    const stopped = running.shutdown(10_000)
    // A second request on the same kept-alive connection, after shutdown began.
    socket.write(`GET /insights/alpha/live HTTP/1.1\r\nHost: q\r\n${auth}\r\n`)
    await new Promise((r) => setTimeout(r, 100))
    release()
    await stopped
    await closed
    // Well before the 10 s grace: the connection did not sit idle until the timer dropped it.
    expect(performance.now() - started).toBeLessThan(3000)
    const responses = received.split(/(?=HTTP\/1\.1 )/)
    // The request in flight is answered in full, and its connection closed after it.
    expect(responses[0]).toMatch(/^HTTP\/1\.1 200 /)
    expect(responses[0]).toMatch(/connection: close/i)
    expect(responses[0]).toContain('"metrics"')
    // The one behind it is never served as usual: the connection closes first (Node drops what is
    // pipelined behind a closing response), or, had it started, it is a 503.
    expect(responses.length).toBeLessThanOrEqual(2)
    if (responses[1]) {
      expect(responses[1]).toMatch(/^HTTP\/1\.1 503 /)
      expect(responses[1]).toContain('"code":"overloaded"')
    }
  })
})

describe('secrets', () => {
  it('pino redacts the credential headers and Authorization wherever a request is logged', () => {
    const lines: string[] = []
    const logger = createLogger('info', { write: (line: string) => void lines.push(line) })
    const secret = clients.read.secret
    const authorization = `Basic ${Buffer.from(`${clients.read.id}:${secret}`).toString('base64')}`
    const headers = { 'openpanel-client-id': clients.read.id, 'openpanel-client-secret': secret, authorization, cookie: `s=${secret}` }
    logger.info({ req: { headers } }, 'a')
    logger.info({ headers }, 'b')
    logger.info({ secret }, 'c')
    const log = lines.join('')
    for (const leak of [secret, authorization, authorization.slice('Basic '.length)]) expect(log).not.toContain(leak)
    expect(log).toContain(clients.read.id)
    expect(log).toContain('[redacted]')
    expect(REDACTED_PATHS).toEqual(expect.arrayContaining(['req.headers.authorization', 'req.headers["openpanel-client-secret"]']))
  })

  it('a secret sent where it does not belong (a query parameter, a value, the id header) is never echoed in an error body', async () => {
    const app = testApp(rt, { now: () => NOW })
    const secret = clients.read.secret
    const s = encodeURIComponent(secret)
    const cases: [string, Record<string, string>][] = [
      [`/insights/alpha/metrics?openpanel-client-secret=${s}`, credentialHeaders(clients.read)],
      [`/insights/alpha/metrics?range=${s}&timezone=${s}&interval=${s}`, credentialHeaders(clients.read)],
      [`/insights/alpha/pages?cursor=${s}&limit=${s}`, credentialHeaders(clients.read)],
      [`/insights/alpha/metrics?range=forever&filters=${encodeURIComponent(JSON.stringify([{ name: 'path', operator: 'is', value: [secret] }]))}`, credentialHeaders(clients.read)],
      [`/export/events?projectId=${s}&format=${s}&includes=${s}`, credentialHeaders(clients.read)],
      [`/export/charts?projectId=alpha&series=${s}&breakdowns=${s}`, credentialHeaders(clients.read)],
      ['/insights/alpha/metrics', { 'openpanel-client-id': secret, 'openpanel-client-secret': secret }],
      ['/insights/alpha/metrics', { authorization: `Bearer ${secret}` }],
      [`/insights/${s}/metrics`, credentialHeaders(clients.read)],
    ]
    for (const [url, headers] of cases) {
      const res = await app.request(url, { headers })
      const text = await res.text()
      expect(res.status, url).toBeGreaterThanOrEqual(400)
      expect(res.status, url).toBeLessThan(500)
      expect(text, url).not.toContain(secret)
      for (const [, value] of res.headers) expect(value).not.toContain(secret)
    }
  })
})
