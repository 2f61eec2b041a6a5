import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { QueryRunner } from '../src/clickhouse/run.ts'
import { EngineUnavailableError } from '../src/clickhouse/errors.ts'
import { createLogger } from '../src/log.ts'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/

let rt: TestRuntime

beforeAll(async () => {
  rt = await openTestRuntime()
})

afterAll(async () => {
  await rt?.dispose()
})

describe('health', () => {
  it('GET /healthz answers 200 {"status":"ok"}', async () => {
    const res = await testApp(rt).request('/healthz')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ status: 'ok' })
  })

  it('GET /readyz answers 200 when the engine answers', async () => {
    const res = await testApp(rt).request('/readyz')
    expect(res.status).toBe(200)
  })

  it('GET /readyz answers 503 with Retry-After when the engine does not', async () => {
    const down: QueryRunner = {
      ...rt.runner,
      rows: () => Promise.reject(new EngineUnavailableError('connection refused')),
    }
    const res = await testApp(rt, { runner: down }).request('/readyz')
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/)
  })
})

describe("OpenPanel's health routes", () => {
  const down = (): QueryRunner => ({ ...rt.runner, rows: () => Promise.reject(new EngineUnavailableError('connection refused')) })

  it('GET /healthcheck: 200 with ClickHouse among the working dependencies when the engine answers', async () => {
    const res = await testApp(rt).request('/healthcheck')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ready: true, ch: true, failedDependencies: [], workingDependencies: ['ch'] })
  })

  it('GET /healthcheck: 503 with ClickHouse failed when the engine does not answer', async () => {
    const res = await testApp(rt, { runner: down() }).request('/healthcheck')
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ ready: false, ch: false, failedDependencies: ['ch'], workingDependencies: [] })
  })

  it('GET /healthz/live: 200 {"live":true}, the engine down or not', async () => {
    const res = await testApp(rt, { runner: down() }).request('/healthz/live')
    expect([res.status, await res.json()]).toEqual([200, { live: true }])
  })

  it('GET /healthz/ready: 200 until shutdown begins, then 503 "shutting down"', async () => {
    const stopping = new AbortController()
    const app = testApp(rt, { shutdown: stopping.signal })
    const before = await app.request('/healthz/ready')
    expect([before.status, await before.json()]).toEqual([200, { ready: true }])
    stopping.abort()
    const after = await app.request('/healthz/ready')
    expect([after.status, await after.json()]).toEqual([503, { ready: false, reason: 'shutting down' }])
  })
})

describe('request ids', () => {
  it('are minted when the request has none', async () => {
    const app = testApp(rt)
    const [a, b] = await Promise.all([app.request('/healthz'), app.request('/healthz')])
    expect(a.headers.get('x-request-id')).toMatch(SANE_ID)
    expect(b.headers.get('x-request-id')).toMatch(SANE_ID)
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'))
  })

  it('are honoured when sane', async () => {
    const res = await testApp(rt).request('/healthz', { headers: { 'X-Request-Id': 'lb-42.abc:7_x' } })
    expect(res.headers.get('x-request-id')).toBe('lb-42.abc:7_x')
  })

  it.each([
    ['spaces and quotes', 'a b "c"'],
    ['markup', '<script>'],
    ['an overlong token', 'x'.repeat(129)],
  ])('are replaced when the incoming one has %s', async (_, incoming) => {
    const res = await testApp(rt).request('/healthz', { headers: { 'X-Request-Id': incoming } })
    const id = res.headers.get('x-request-id')
    expect(id).not.toBe(incoming)
    expect(id).toMatch(SANE_ID)
  })
})

describe('unknown routes', () => {
  it('answer 404 in the error envelope, with the request id of the response', async () => {
    const res = await testApp(rt).request('/no/such/route?x=1')
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    const body = (await res.json()) as Record<string, unknown>
    expect(body).toEqual({
      status: 404,
      error: 'Not Found',
      code: 'not_found',
      message: expect.stringContaining('/no/such/route'),
      requestId: res.headers.get('x-request-id'),
    })
  })
})

describe('access log', () => {
  it('writes one line per request with method, path, status, duration and request id', async () => {
    const lines: Record<string, unknown>[] = []
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>)
        done()
      },
    })
    const app = testApp(rt, { logger: createLogger('info', sink) })
    await app.request('/healthz', { headers: { 'X-Request-Id': 'log-1' } })
    await app.request('/missing', { headers: { 'X-Request-Id': 'log-2' } })
    const requests = lines.filter((l) => l.msg === 'request')
    expect(requests).toEqual([
      expect.objectContaining({ method: 'GET', path: '/healthz', status: 200, requestId: 'log-1', ms: expect.any(Number) }),
      expect.objectContaining({ method: 'GET', path: '/missing', status: 404, requestId: 'log-2', ms: expect.any(Number) }),
    ])
  })
})
