import type { Context } from 'hono'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AppDeps } from '../src/app.ts'
import type { AppEnv } from '../src/app-env.ts'
import { BoundedMap } from '../src/http/bounded-map.ts'
import { createClientRow } from '../src/auth/clients.ts'
import { verifySecret } from '../src/auth/secrets.ts'
import type { Config } from '../src/config.ts'
import { RateBuckets } from '../src/http/rate-limit.ts'
import { createProject } from '../src/projects.ts'
import { listen } from '../src/server.ts'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'

describe('RateBuckets (token bucket as GCRA)', () => {
  it('counts down, refuses with Retry-After, refills evenly over the window', () => {
    let now = 1_000
    const buckets = new RateBuckets({ limit: 5, windowMs: 10_000, clock: () => now })
    // One token comes back every 10 s / 5 = 2 s; Reset is the time until the bucket is full.
    const taken = Array.from({ length: 5 }, () => buckets.take('a'))
    expect(taken.map((d) => [d.allowed, d.remaining, d.resetS])).toEqual([
      [true, 4, 2],
      [true, 3, 4],
      [true, 2, 6],
      [true, 1, 8],
      [true, 0, 10],
    ])
    expect(buckets.take('a')).toMatchObject({ allowed: false, remaining: 0, retryAfterS: 2, resetS: 10 })
    now += 1_999
    expect(buckets.take('a')).toMatchObject({ allowed: false, retryAfterS: 1 })
    now += 1
    expect(buckets.take('a')).toMatchObject({ allowed: true, remaining: 0 })
    now += 10_000
    expect(buckets.take('a')).toMatchObject({ allowed: true, remaining: 4 })
    // Another key has its own bucket.
    expect(buckets.take('b')).toMatchObject({ allowed: true, remaining: 4 })
  })

  it('does not lose a token to rounding when the window does not divide by the limit', () => {
    let now = 0
    const buckets = new RateBuckets({ limit: 3, windowMs: 10_000, clock: () => now })
    expect([1, 2, 3, 4].map(() => buckets.take('k').remaining)).toEqual([2, 1, 0, 0])
    now += 10_000
    expect(buckets.take('k').remaining).toBe(2)
  })

  it('forgets the oldest key when full, which only ever returns a full bucket', () => {
    const buckets = new RateBuckets({ limit: 2, windowMs: 10_000, clock: () => 0, maxKeys: 2 })
    buckets.take('a')
    buckets.take('a')
    buckets.take('b')
    buckets.take('c')
    expect(buckets.take('a')).toMatchObject({ allowed: true, remaining: 1 })
  })
})

describe('BoundedMap', () => {
  it('never holds more than maxKeys and sweeps idle entries once per interval', () => {
    const map = new BoundedMap<number>({ maxKeys: 3, sweepEveryMs: 100, isIdle: (expiresAt, now) => expiresAt <= now })
    for (let i = 0; i < 10; i++) {
      map.set(`k${i}`, 1_000, 0)
      expect(map.size).toBeLessThanOrEqual(3)
    }
    expect([map.get('k7'), map.get('k8'), map.get('k9')]).toEqual([1_000, 1_000, 1_000])
    map.set('short', 50, 50) // at the cap: the oldest (k7) gives way
    map.set('k9', 1_000, 60) // before the next sweep: nothing idle is dropped
    expect(map.size).toBe(3)
    map.set('late', 1_000, 150) // a sweep: 'short' has expired
    expect([map.size, map.get('short'), map.get('k8')]).toEqual([3, undefined, 1_000])
  })
})

let rt: TestRuntime
const PROJECT = 'rl'
let alice: { id: string; secret: string }
let bob: { id: string; secret: string }

beforeAll(async () => {
  rt = await openTestRuntime()
  await createProject(rt.runner, { id: PROJECT, name: 'Rate limits', timezone: 'UTC', organizationId: 'org' })
  alice = await createClientRow(rt.runner, { type: 'read', projectId: PROJECT, organizationId: 'org', name: 'alice' })
  bob = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'org', name: 'bob' })
})

afterAll(async () => {
  await rt?.dispose()
})

const creds = (c: { id: string; secret: string }) => ({ 'openpanel-client-id': c.id, 'openpanel-client-secret': c.secret })

function probeApp(config: Partial<Config>, extra: Partial<AppDeps> = {}) {
  const app = testApp(rt, { ...extra, config: { ...rt.config, ...config } })
  const echo = (c: Context<AppEnv>) => c.json({ project: c.get('project').id })
  app.get('/insights/:projectId/_auth/probe', echo)
  app.get('/export/_auth/probe', echo)
  return app
}

const limitHeaders = (res: Response) => {
  // OpenPanel's names carry the same values, on every response that has the standard ones.
  for (const name of ['limit', 'remaining', 'reset']) expect(res.headers.get(`x-ratelimit-${name}`), name).toBe(res.headers.get(`ratelimit-${name}`))
  return ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after'].map((h) => res.headers.get(h))
}

describe('per-client rate limit', () => {
  it('headers count down, 429 rate_limited with Retry-After, recovery as the window passes', async () => {
    let now = 0
    const app = probeApp({ QUARRY_RATE_LIMIT: 5, QUARRY_RATE_WINDOW_S: 10 }, { auth: { clock: () => now } })
    const get = () => app.request(`/insights/${PROJECT}/_auth/probe`, { headers: creds(alice) })
    const seen: (string | null)[][] = []
    for (let i = 0; i < 5; i++) {
      const res = await get()
      expect(res.status).toBe(200)
      seen.push(limitHeaders(res))
    }
    expect(seen).toEqual([
      ['5', '4', '2', null],
      ['5', '3', '4', null],
      ['5', '2', '6', null],
      ['5', '1', '8', null],
      ['5', '0', '10', null],
    ])
    const refused = await get()
    expect(refused.status).toBe(429)
    expect(limitHeaders(refused)).toEqual(['5', '0', '10', '2'])
    expect(await refused.json()).toMatchObject({ status: 429, error: 'Too Many Requests', code: 'rate_limited' })
    // Another client is not affected.
    expect((await app.request(`/insights/${PROJECT}/_auth/probe`, { headers: creds(bob) })).status).toBe(200)

    now += 2_000
    expect(limitHeaders(await get())).toEqual(['5', '0', '10', null])
    expect((await get()).status).toBe(429)
    now += 10_000
    const recovered = await get()
    expect([recovered.status, ...limitHeaders(recovered)]).toEqual([200, '5', '4', '2', null])
  })

  it('/insights and /export draw on one budget, and authenticated error responses carry the headers', async () => {
    const app = probeApp({ QUARRY_RATE_LIMIT: 3, QUARRY_RATE_WINDOW_S: 60 })
    const a = await app.request(`/insights/${PROJECT}/_auth/probe`, { headers: creds(alice) })
    const b = await app.request('/export/_auth/probe?projectId=other', { headers: creds(alice) })
    const c = await app.request('/insights/nope/_auth/probe', { headers: creds(alice) })
    expect([a.status, b.status, c.status]).toEqual([200, 403, 403])
    expect([a, b, c].map((r) => r.headers.get('ratelimit-remaining'))).toEqual(['2', '1', '0'])
    const d = await app.request('/export/_auth/probe', { headers: creds(alice) })
    expect([d.status, d.headers.get('retry-after')]).toEqual([429, '20'])
  })

  it('recovers in real time after a short window', async () => {
    const app = probeApp({ QUARRY_RATE_LIMIT: 2, QUARRY_RATE_WINDOW_S: 1 })
    const get = async () => (await app.request(`/insights/${PROJECT}/_auth/probe`, { headers: creds(bob) })).status
    expect([await get(), await get(), await get()]).toEqual([200, 200, 429])
    await new Promise((r) => setTimeout(r, 1_050))
    expect([await get(), await get()]).toEqual([200, 200])
  })
})

/** The source address comes from a test header, standing in for different peers. */
const addressFromHeader = (c: Context) => c.req.header('x-test-address') ?? 'none'

describe('failed authentications per source address', () => {
  it('beyond the limit → 429 even with correct credentials, until the window passes; other addresses unaffected', async () => {
    let now = 0
    const app = probeApp(
      { QUARRY_AUTH_FAILURE_LIMIT: 3, QUARRY_RATE_WINDOW_S: 10 },
      { auth: { clock: () => now, clientAddress: addressFromHeader } },
    )
    const get = async (address: string, headers: Record<string, string>) => {
      const res = await app.request(`/insights/${PROJECT}/_auth/probe`, { headers: { ...headers, 'x-test-address': address } })
      return { status: res.status, retryAfter: res.headers.get('retry-after'), code: ((await res.json()) as { code: string }).code }
    }
    const wrong = { 'openpanel-client-id': alice.id, 'openpanel-client-secret': 'sec_guess' }
    for (let i = 0; i < 3; i++) expect((await get('10.0.0.1', wrong)).status).toBe(401)
    expect(await get('10.0.0.1', wrong)).toEqual({ status: 429, retryAfter: '10', code: 'rate_limited' })
    now += 4_000
    expect(await get('10.0.0.1', creds(alice))).toEqual({ status: 429, retryAfter: '6', code: 'rate_limited' })
    expect((await get('10.0.0.2', creds(alice))).status).toBe(200)
    now += 6_000
    expect((await get('10.0.0.1', creds(alice))).status).toBe(200)
    // A new window: the address has its full allowance again.
    for (let i = 0; i < 3; i++) expect((await get('10.0.0.1', {})).status).toBe(401)
    expect((await get('10.0.0.1', {})).status).toBe(429)
  })

  it('a burst of parallel guesses cannot outrun the limit: at most that many verifications run', async () => {
    let verifications = 0
    const app = probeApp(
      { QUARRY_AUTH_FAILURE_LIMIT: 3, QUARRY_RATE_WINDOW_S: 10 },
      {
        auth: {
          clientAddress: addressFromHeader,
          verifySecret: (secret, stored) => {
            verifications += 1
            return verifySecret(secret, stored)
          },
        },
      },
    )
    const statuses = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const headers = { 'openpanel-client-id': alice.id, 'openpanel-client-secret': `sec_${randomUUID()}`, 'x-test-address': 'burst' }
        return (await app.request(`/insights/${PROJECT}/_auth/probe`, { headers })).status
      }),
    )
    expect(verifications).toBe(3)
    expect(statuses.filter((s) => s === 401)).toHaveLength(3)
    expect(statuses.filter((s) => s === 429)).toHaveLength(7)
  })

  it('without a socket (app.request) every request shares one address', async () => {
    const app = probeApp({ QUARRY_AUTH_FAILURE_LIMIT: 2 })
    const get = async (headers: Record<string, string>) => (await app.request(`/insights/${PROJECT}/_auth/probe`, { headers })).status
    expect([await get({}), await get({}), await get(creds(alice))]).toEqual([401, 401, 429])
  })

  describe('over a real socket', () => {
    async function serveProbe(config: Partial<Config>) {
      const running = await listen(probeApp(config), '127.0.0.1', 0)
      const get = async (headers: Record<string, string>) =>
        (await fetch(`http://127.0.0.1:${running.port}/insights/${PROJECT}/_auth/probe`, { headers })).status
      return { get, close: () => running.shutdown(100) }
    }

    it('takes the peer address from the connection and ignores X-Forwarded-For by default', async () => {
      const server = await serveProbe({ QUARRY_AUTH_FAILURE_LIMIT: 2 })
      try {
        expect(await server.get({ 'x-forwarded-for': '192.0.2.1' })).toBe(401)
        expect(await server.get({ 'x-forwarded-for': '192.0.2.2' })).toBe(401)
        expect(await server.get({ ...creds(alice), 'x-forwarded-for': '192.0.2.3' })).toBe(429)
      } finally {
        await server.close()
      }
    })

    it('with QUARRY_TRUST_PROXY_HOPS=1 keys on the address the proxy appended', async () => {
      const server = await serveProbe({ QUARRY_AUTH_FAILURE_LIMIT: 2, QUARRY_TRUST_PROXY_HOPS: 1 })
      try {
        // The client wrote the first entry itself; the proxy appended the last one.
        expect(await server.get({ 'x-forwarded-for': '198.51.100.7, 192.0.2.1' })).toBe(401)
        expect(await server.get({ 'x-forwarded-for': '198.51.100.8, 192.0.2.1' })).toBe(401)
        expect(await server.get({ ...creds(alice), 'x-forwarded-for': '192.0.2.1' })).toBe(429)
        expect(await server.get({ ...creds(alice), 'x-forwarded-for': '192.0.2.1, 192.0.2.9' })).toBe(200)
      } finally {
        await server.close()
      }
    })
  })
})
