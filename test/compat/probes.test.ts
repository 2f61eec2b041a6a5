/**
 * The probes of an OpenPanel deployment replayed against Quarry over HTTP: the compose file's
 * `curl -f /healthcheck`, an orchestrator's liveness and readiness probes, a browser dashboard's
 * CORS preflight, and a client reading the reference at OpenPanel's documentation paths. Probes
 * need no credentials, are never rate limited and are never refused by admission control.
 */
import { ClickHouseLogLevel, createClient as createClickHouse } from '@clickhouse/client'
import { serve, type ServerType } from '@hono/node-server'
import createClient from 'openapi-fetch'
import { createServer, type AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../../src/auth/clients.ts'
import { httpEngine } from '../../src/clickhouse/engine/http.ts'
import { createQueryGate } from '../../src/clickhouse/gate.ts'
import { createQueryRunner } from '../../src/clickhouse/run.ts'
import { createLogger } from '../../src/log.ts'
import { createProject } from '../../src/projects.ts'
import type { paths } from '../generated/quarry-api.js'
import { openTestRuntime, testApp, type TestRuntime } from '../helpers/runtime.ts'
import { headers } from './fixture.ts'

let rt: TestRuntime
let server: ServerType
let base: string
const stopping = new AbortController()
let reader: { id: string; secret: string }

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '2', QUARRY_RATE_WINDOW_S: '3600' })
  await createProject(rt.runner, { id: 'shop', name: 'Shop', timezone: 'UTC', organizationId: 'org-p' })
  reader = await createClientRow(rt.runner, { type: 'read', projectId: 'shop', organizationId: 'org-p', name: 'probe-reader' })
  const app = testApp(rt, { shutdown: stopping.signal })
  await new Promise<void>((resolve) => {
    server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) => {
      base = `http://127.0.0.1:${info.port}`
      resolve()
    })
  })
})

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve))
  await rt?.dispose()
})

const api = () => createClient<paths>({ baseUrl: base })

const UP = { ready: true, ch: true, failedDependencies: [], workingDependencies: ['ch'] }

describe('health probes', () => {
  it('answer OpenPanel bodies, without credentials, however often (the rate limit here is 2 per hour)', async () => {
    for (let round = 0; round < 4; round++) {
      const check = await api().GET('/healthcheck')
      expect([check.response.status, check.data]).toEqual([200, UP])
      expect(check.response.headers.get('x-ratelimit-limit')).toBeNull()
      const live = await api().GET('/healthz/live')
      expect([live.response.status, live.data]).toEqual([200, { live: true }])
      const ready = await api().GET('/healthz/ready')
      expect([ready.response.status, ready.data]).toEqual([200, { ready: true }])
    }
    // What `curl -f` sees: a plain 200 over HTTP.
    expect((await fetch(`${base}/healthcheck`)).status).toBe(200)
    // The API routes of the same server do count: the third request of the reader is refused.
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await fetch(`${base}/insights/shop/live`, { headers: headers(reader) })).status)
    expect(statuses).toEqual([200, 200, 429])
  })

  it('are never refused by admission control, while API requests beyond it are', async () => {
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const busy = testApp(rt, {
      config: { ...rt.config, QUARRY_MAX_CONCURRENT_QUERIES: 1, QUARRY_MAX_QUEUED_QUERIES: 0, QUARRY_RATE_LIMIT: 1000 },
      // Two requests stop inside authentication, so two are in progress: admission's limit here.
      auth: { verifySecret: async () => (await held, true) },
    })
    const inFlight = [0, 1].map(() => busy.request('/insights/shop/live', { headers: headers(reader) }))
    await new Promise((resolve) => setTimeout(resolve, 50))
    const refused = await busy.request('/insights/shop/live', { headers: headers(reader) })
    expect([refused.status, ((await refused.json()) as { code: string }).code]).toEqual([503, 'overloaded'])
    for (const path of ['/healthcheck', '/healthz/live', '/healthz/ready', '/healthz', '/readyz']) {
      expect((await busy.request(path)).status, path).toBe(200)
    }
    release()
    expect((await Promise.all(inFlight)).map((r) => r.status)).toEqual([200, 200])
  })

  it('/healthcheck is 503 when the engine does not answer; liveness and readiness stay 200', async () => {
    const port = await closedPort()
    const client = createClickHouse({ url: `http://127.0.0.1:${port}`, request_timeout: 2000, log: { level: ClickHouseLogLevel.OFF } })
    try {
      const runner = createQueryRunner(httpEngine(client, 'quarry'), createQueryGate({ concurrency: 2, maxQueued: 2 }), createLogger('silent'))
      const down = testApp(rt, { runner })
      const check = await down.request('/healthcheck')
      expect([check.status, await check.json()]).toEqual([503, { ready: false, ch: false, failedDependencies: ['ch'], workingDependencies: [] }])
      expect(check.headers.get('retry-after')).toBe('5')
      expect((await down.request('/healthz/live')).status).toBe(200)
      expect((await down.request('/healthz/ready')).status).toBe(200)
    } finally {
      await client.close()
    }
  })
})

describe('documentation at OpenPanel paths', () => {
  it('/documentation is the reference page and /documentation/json the OpenAPI document', async () => {
    const page = await api().GET('/documentation', { parseAs: 'text' })
    expect([page.response.status, page.response.headers.get('content-type')]).toEqual([200, 'text/html; charset=UTF-8'])
    expect(page.data).toBe(await (await fetch(`${base}/docs`)).text())
    const doc = await api().GET('/documentation/json')
    expect(doc.response.status).toBe(200)
    expect(doc.data).toEqual(await (await fetch(`${base}/openapi.json`)).json())
    expect(Object.keys((doc.data as { paths: object }).paths)).toEqual(expect.arrayContaining(['/healthcheck', '/documentation', '/documentation/json']))
  })
})

describe("a browser dashboard's CORS preflight", () => {
  it('is allowed whatever headers it asks for (content-type, tracing), before authentication', async () => {
    const asked = 'content-type, openpanel-client-id, openpanel-client-secret, x-trace-id, sentry-trace'
    const res = await fetch(`${base}/insights/shop/metrics`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://dash.example', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': asked },
    })
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/)
    for (const h of asked.split(', ')) expect(allowed, h).toContain(h)
    expect(stopping.signal.aborted).toBe(false)
  })
})

describe('once shutdown has begun', () => {
  it('readiness is 503 shutting down while liveness and the engine check stay 200', async () => {
    stopping.abort()
    const ready = await api().GET('/healthz/ready')
    expect([ready.response.status, ready.error]).toEqual([503, { ready: false, reason: 'shutting down' }])
    expect((await api().GET('/healthz/live')).response.status).toBe(200)
    expect((await api().GET('/healthcheck')).data).toEqual(UP)
  })
})

async function closedPort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return port
}
