import { createRoute, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AppDeps } from '../src/app.ts'
import type { AppEnv } from '../src/app-env.ts'
import { createClientRow, revokeClient, type ClientType } from '../src/auth/clients.ts'
import { verifySecret } from '../src/auth/secrets.ts'
import type { Config } from '../src/config.ts'
import { createLogger } from '../src/log.ts'
import { createProject } from '../src/projects.ts'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'

let rt: TestRuntime

interface Client {
  id: string
  secret: string
}
const clients: Record<string, Client> = {}

const newClient = (type: ClientType, projectId: string | null, organizationId = 'org-a') =>
  createClientRow(rt.runner, { type, projectId, organizationId, name: `${type}-${projectId}` })

beforeAll(async () => {
  rt = await openTestRuntime()
  await createProject(rt.runner, { id: 'alpha', name: 'Alpha', timezone: 'Europe/Berlin', organizationId: 'org-a' })
  await createProject(rt.runner, { id: 'beta', name: 'Beta', timezone: 'UTC', organizationId: 'org-a' })
  await createProject(rt.runner, { id: 'gamma', name: 'Gamma', timezone: 'UTC', organizationId: 'org-b' })
  clients.read = await newClient('read', 'alpha')
  clients.root = await newClient('root', null)
  clients.write = await newClient('write', 'alpha')
  // A read client whose project row is gone, and a root client carrying a project as OpenPanel allows.
  clients.orphan = await newClient('read', 'ghost')
  clients.rootWithProject = await newClient('root', 'beta')
  clients.revoked = await newClient('read', 'alpha')
  await revokeClient(rt.runner, clients.revoked.id)
})

afterAll(async () => {
  await rt?.dispose()
})

const client = (name: string): Client => {
  const c = clients[name]
  if (!c) throw new Error(`no test client ${name}`)
  return c
}

const headersOf = (c: Client) => ({ 'openpanel-client-id': c.id, 'openpanel-client-secret': c.secret })
const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` })

/** The app as buildApp makes it, plus probe routes that echo what the guard left on the context. */
function probeApp(extra: Partial<AppDeps> = {}, config: Partial<Config> = {}) {
  const app = testApp(rt, { ...extra, config: { ...rt.config, ...config } })
  const echo = (c: Context<AppEnv>) =>
    c.json({ project: c.get('project').id, timezone: c.get('project').timezone, client: c.get('client').id })
  app.get('/insights/:projectId/_auth/probe', echo)
  app.get('/export/_auth/probe', echo)
  const Limit = z.object({ limit: z.coerce.number().int().min(1).max(10) })
  const Echo = { 200: { description: 'ok', content: { 'application/json': { schema: z.object({ limit: z.number() }) } } } }
  app.openapi(
    createRoute({ method: 'get', path: '/insights/{projectId}/_auth/validated', request: { query: Limit }, responses: Echo }),
    (c) => c.json({ limit: c.req.valid('query').limit }, 200),
  )
  app.openapi(
    createRoute({ method: 'get', path: '/export/_auth/validated', request: { query: Limit }, responses: Echo }),
    (c) => c.json({ limit: c.req.valid('query').limit }, 200),
  )
  return app
}

// The table's failure rows would trip the per-address failure limit (every app.request shares one
// address); that limit has its own tests in rate-limit.test.ts.
const UNLIMITED = { QUARRY_AUTH_FAILURE_LIMIT: 1_000_000, QUARRY_RATE_LIMIT: 1_000_000 }

interface Surface {
  name: string
  url: (projectId: string) => string
}
const SURFACES: Surface[] = [
  { name: 'insights path', url: (p) => `/insights/${encodeURIComponent(p)}/_auth/probe` },
  { name: 'export projectId', url: (p) => `/export/_auth/probe?projectId=${encodeURIComponent(p)}` },
  { name: 'export project_id', url: (p) => `/export/_auth/probe?project_id=${encodeURIComponent(p)}` },
]

describe('decision table', () => {
  const app = () => probeApp({}, UNLIMITED)
  let shared: ReturnType<typeof probeApp>
  beforeAll(() => {
    shared = app()
  })

  async function call(url: string, headers: Record<string, string> = {}) {
    const res = await shared.request(url, { headers })
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers }
  }

  for (const surface of SURFACES) {
    describe(surface.name, () => {
      it('401 invalid_credentials, with one message, for every kind of bad credentials', async () => {
        const cases: Record<string, Record<string, string>> = {
          'no credentials': {},
          'malformed id': { 'openpanel-client-id': 'not-a-uuid', 'openpanel-client-secret': client('read').secret },
          'unknown id': { 'openpanel-client-id': randomUUID(), 'openpanel-client-secret': client('read').secret },
          'revoked client': headersOf(client('revoked')),
          'wrong secret': { 'openpanel-client-id': client('read').id, 'openpanel-client-secret': `${client('read').secret}x` },
          'id without secret': { 'openpanel-client-id': client('read').id },
        }
        const messages = new Set<unknown>()
        for (const [name, headers] of Object.entries(cases)) {
          const { status, body, headers: h } = await call(surface.url('alpha'), headers)
          expect({ name, status, code: body.code }).toEqual({ name, status: 401, code: 'invalid_credentials' })
          expect(Object.keys(body).sort()).toEqual(['code', 'error', 'message', 'requestId', 'status'])
          expect(body).toMatchObject({ status: 401, error: 'Unauthorized', requestId: h.get('x-request-id') })
          // No rate-limit headers: the caller is not authenticated.
          expect(h.get('ratelimit-limit')).toBeNull()
          messages.add(body.message)
        }
        expect(messages.size).toBe(1)
      })

      it('403 client_type_not_allowed for a write client, even for its own project', async () => {
        const { status, body } = await call(surface.url('alpha'), headersOf(client('write')))
        expect([status, body.code]).toEqual([403, 'client_type_not_allowed'])
      })

      it('a read client reaches its own project, with the project row on the context', async () => {
        const { status, body } = await call(surface.url('alpha'), headersOf(client('read')))
        expect(status).toBe(200)
        expect(body).toEqual({ project: 'alpha', timezone: 'Europe/Berlin', client: client('read').id })
      })

      it("403 project_forbidden for a read client asking for another project, existing or not", async () => {
        for (const other of ['beta', 'gamma', 'does-not-exist', 'bad id!']) {
          const { status, body } = await call(surface.url(other), headersOf(client('read')))
          expect({ other, status, code: body.code }).toEqual({ other, status: 403, code: 'project_forbidden' })
        }
      })

      it('403 project_forbidden for a read client whose own project does not exist', async () => {
        const { status, body } = await call(surface.url('ghost'), headersOf(client('orphan')))
        expect([status, body.code]).toEqual([403, 'project_forbidden'])
      })

      it("a root client reaches every project of its organization", async () => {
        for (const p of ['alpha', 'beta']) {
          const { status, body } = await call(surface.url(p), headersOf(client('root')))
          expect(status).toBe(200)
          expect(body.project).toBe(p)
        }
      })

      it('404 project_not_found for a root client asking for a missing or foreign project', async () => {
        for (const other of ['gamma', 'does-not-exist', 'bad id!']) {
          const { status, body } = await call(surface.url(other), headersOf(client('root')))
          expect({ other, status, code: body.code }).toEqual({ other, status: 404, code: 'project_not_found' })
        }
      })
    })
  }

  describe('export without a project parameter', () => {
    it("a read client gets its own project", async () => {
      const { status, body } = await call('/export/_auth/probe', headersOf(client('read')))
      expect([status, body.project]).toEqual([200, 'alpha'])
    })

    it('a root client without a project of its own → 400 project_required', async () => {
      const { status, body } = await call('/export/_auth/probe', headersOf(client('root')))
      expect([status, body.code]).toEqual([400, 'project_required'])
    })

    it('a root client carrying a project (as OpenPanel rows may) gets that project', async () => {
      const { status, body } = await call('/export/_auth/probe', headersOf(client('rootWithProject')))
      expect([status, body.project]).toEqual([200, 'beta'])
    })

    it('an empty projectId counts as absent', async () => {
      const { status, body } = await call('/export/_auth/probe?projectId=', headersOf(client('read')))
      expect([status, body.project]).toEqual([200, 'alpha'])
    })
  })

  it('projectId wins over project_id', async () => {
    const ok = await call('/export/_auth/probe?projectId=alpha&project_id=beta', headersOf(client('read')))
    expect([ok.status, ok.body.project]).toEqual([200, 'alpha'])
    const refused = await call('/export/_auth/probe?project_id=alpha&projectId=beta', headersOf(client('read')))
    expect([refused.status, refused.body.code]).toEqual([403, 'project_forbidden'])
  })

  it('a percent-encoded path segment is checked as the route will see it', async () => {
    const { status, body } = await call('/insights/%61lpha/_auth/probe', headersOf(client('read')))
    expect([status, body.project]).toEqual([200, 'alpha'])
  })

  it('an unknown route under /insights or /export answers 401 before 404', async () => {
    for (const url of ['/insights/alpha/nope', '/insights', '/export/nope']) {
      expect((await call(url)).status).toBe(401)
      const { status, body } = await call(url, headersOf(client('read')))
      expect([url, status, body.code]).toEqual([url, 404, 'not_found'])
    }
  })

  it('routes outside /insights and /export need no credentials', async () => {
    expect((await shared.request('/healthz')).status).toBe(200)
  })
})

describe('credential forms', () => {
  let app: ReturnType<typeof probeApp>
  beforeAll(() => {
    app = probeApp({}, UNLIMITED)
  })
  const status = async (headers: Record<string, string>) =>
    (await app.request('/insights/alpha/_auth/probe', { headers })).status

  it('accepts Authorization: Basic base64(id:secret)', async () => {
    const { id, secret } = client('read')
    expect(await status(basic(id, secret))).toBe(200)
    expect(await status({ authorization: `basic   ${Buffer.from(`${id}:${secret}`).toString('base64')}` })).toBe(200)
    expect(await status(basic(id.toUpperCase(), secret))).toBe(200)
    expect(await status(basic(id, `${secret}0`))).toBe(401)
    expect(await status(basic(randomUUID(), secret))).toBe(401)
  })

  it('refuses malformed or foreign Authorization schemes', async () => {
    const { id, secret } = client('read')
    expect(await status({ authorization: `Basic ${Buffer.from(`${id}${secret}`).toString('base64')}` })).toBe(401)
    expect(await status({ authorization: 'Basic ***' })).toBe(401)
    expect(await status({ authorization: `Bearer ${secret}` })).toBe(401)
  })

  it('refuses credentials in the wrong headers', async () => {
    const { id, secret } = client('read')
    expect(await status({ 'x-client-id': id, 'x-client-secret': secret })).toBe(401)
    expect(await status({ 'openpanel-client-secret': secret, 'x-client-id': id })).toBe(401)
  })

  it('prefers the openpanel headers over Authorization', async () => {
    const { id, secret } = client('read')
    expect(await status({ ...headersOf(client('read')), ...basic(id, 'wrong') })).toBe(200)
    expect(await status({ 'openpanel-client-id': id, 'openpanel-client-secret': 'wrong', ...basic(id, secret) })).toBe(401)
  })
})

describe('authentication before parameter validation', () => {
  let app: ReturnType<typeof probeApp>
  beforeAll(() => {
    app = probeApp({}, UNLIMITED)
  })

  for (const base of ['/insights/alpha/_auth/validated', '/export/_auth/validated']) {
    it(`${base}: bad parameters and bad credentials → 401, good credentials → 400, both good → 200`, async () => {
      const bad = `${base}?limit=999`
      const badCreds = { 'openpanel-client-id': client('read').id, 'openpanel-client-secret': 'nope' }
      const r1 = await app.request(bad, { headers: badCreds })
      expect([r1.status, ((await r1.json()) as { code: string }).code]).toEqual([401, 'invalid_credentials'])
      const r2 = await app.request(bad, { headers: headersOf(client('read')) })
      expect([r2.status, ((await r2.json()) as { code: string }).code]).toEqual([400, 'invalid_parameters'])
      const r3 = await app.request(`${base}?limit=7`, { headers: headersOf(client('read')) })
      expect([r3.status, await r3.json()]).toEqual([200, { limit: 7 }])
    })
  }

  it('holds for the real insights routes that buildApp mounts', async () => {
    const url = '/insights/alpha/metrics?range=not-a-range'
    const r1 = await app.request(url)
    expect([r1.status, ((await r1.json()) as { code: string }).code]).toEqual([401, 'invalid_credentials'])
    const r2 = await app.request(url, { headers: headersOf(client('read')) })
    expect([r2.status, ((await r2.json()) as { code: string }).code]).toEqual([400, 'invalid_parameters'])
  })

  it('a read client learns nothing about parameters of a project it may not read', async () => {
    const res = await app.request('/insights/beta/_auth/validated?limit=999', { headers: headersOf(client('read')) })
    expect(res.status).toBe(403)
  })
})

/** Runs the real scrypt check and counts how often it ran. */
function countingVerify() {
  const counter = {
    calls: 0,
    verify: (secret: string, stored: string) => {
      counter.calls += 1
      return verifySecret(secret, stored)
    },
  }
  return counter
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

describe('no enumeration of client ids by timing', () => {
  it('an unknown id costs about as much as a wrong secret (ratio of medians within 0.5–2)', async () => {
    const counter = countingVerify()
    const app = probeApp({ auth: { verifySecret: counter.verify } }, UNLIMITED)
    const known = client('read')
    const time = async (headers: Record<string, string>) => {
      const started = performance.now()
      const res = await app.request('/insights/alpha/_auth/probe', { headers })
      const ms = performance.now() - started
      expect(res.status).toBe(401)
      return ms
    }
    const unknown: number[] = []
    const wrong: number[] = []
    // Fresh secrets each time, so nothing can come from a cache; interleaved, so drift hits both alike.
    const tries = 30
    for (let i = 0; i < tries + 3; i++) {
      const u = await time({ 'openpanel-client-id': randomUUID(), 'openpanel-client-secret': `sec_${randomUUID()}` })
      const w = await time({ 'openpanel-client-id': known.id, 'openpanel-client-secret': `sec_${randomUUID()}` })
      if (i >= 3) {
        unknown.push(u)
        wrong.push(w)
      }
    }
    // Both paths ran scrypt every time.
    expect(counter.calls).toBe(2 * (tries + 3))
    const ratio = median(unknown) / median(wrong)
    expect(ratio).toBeGreaterThan(0.5)
    expect(ratio).toBeLessThan(2)
  })
})

describe('verification cache', () => {
  it('100 parallel requests with one client run scrypt once', async () => {
    const counter = countingVerify()
    const app = probeApp({ auth: { verifySecret: counter.verify } })
    const fresh = await newClient('read', 'alpha')
    const responses = await Promise.all(
      Array.from({ length: 100 }, () => app.request('/insights/alpha/_auth/probe', { headers: headersOf(fresh) })),
    )
    expect(responses.map((r) => r.status)).toEqual(Array(100).fill(200))
    expect(counter.calls).toBe(1)
  })

  it('parallel requests with the same wrong secret share one verification, and none is cached as a success', async () => {
    const counter = countingVerify()
    const app = probeApp({ auth: { verifySecret: counter.verify } }, UNLIMITED)
    const wrong = { 'openpanel-client-id': client('read').id, 'openpanel-client-secret': 'sec_wrong' }
    const first = await Promise.all(Array.from({ length: 10 }, () => app.request('/insights/alpha/_auth/probe', { headers: wrong })))
    expect(first.map((r) => r.status)).toEqual(Array(10).fill(401))
    expect(counter.calls).toBe(1)
    expect((await app.request('/insights/alpha/_auth/probe', { headers: wrong })).status).toBe(401)
    expect(counter.calls).toBe(2)
  })

  it('a cached success does not let a different secret for the same id through', async () => {
    const counter = countingVerify()
    const app = probeApp({ auth: { verifySecret: counter.verify } }, UNLIMITED)
    const { id, secret } = client('read')
    expect((await app.request('/insights/alpha/_auth/probe', { headers: headersOf(client('read')) })).status).toBe(200)
    // Change the last character to one it is not, so the wrong secret really differs.
    const wrong = { 'openpanel-client-id': id, 'openpanel-client-secret': `${secret.slice(0, -1)}${secret.endsWith('0') ? '1' : '0'}` }
    expect((await app.request('/insights/alpha/_auth/probe', { headers: wrong })).status).toBe(401)
    expect((await app.request('/insights/alpha/_auth/probe', { headers: headersOf(client('read')) })).status).toBe(200)
    // One scrypt for the success (then cached), one for the wrong secret.
    expect(counter.calls).toBe(2)
  })

  it('a revoked client is refused once the cache TTL has passed', async () => {
    const counter = countingVerify()
    const app = probeApp({ auth: { verifySecret: counter.verify } }, { QUARRY_AUTH_CACHE_TTL_S: 1 })
    const victim = await newClient('read', 'alpha')
    const get = async () => (await app.request('/insights/alpha/_auth/probe', { headers: headersOf(victim) })).status
    expect(await get()).toBe(200)
    await revokeClient(rt.runner, victim.id)
    // Within the TTL the cached verification still stands; that is the documented bound.
    expect(await get()).toBe(200)
    expect(counter.calls).toBe(1)
    await new Promise((r) => setTimeout(r, 1100))
    expect(await get()).toBe(401)
  })

  it('an expired entry for an unchanged client is renewed by re-reading the row, without scrypt', async () => {
    let now = 0
    const counter = countingVerify()
    const app = probeApp({ auth: { verifySecret: counter.verify, clock: () => now } }, { QUARRY_AUTH_CACHE_TTL_S: 60 })
    const fresh = await newClient('read', 'alpha')
    const get = async () => (await app.request('/insights/alpha/_auth/probe', { headers: headersOf(fresh) })).status
    expect(await get()).toBe(200)
    now += 61_000
    expect(await get()).toBe(200)
    expect(counter.calls).toBe(1)
    await revokeClient(rt.runner, fresh.id)
    now += 61_000
    expect(await get()).toBe(401)
  })

  it('with a TTL of 0 every request verifies', async () => {
    const counter = countingVerify()
    const app = probeApp({ auth: { verifySecret: counter.verify } }, { QUARRY_AUTH_CACHE_TTL_S: 0 })
    for (let i = 0; i < 3; i++) {
      expect((await app.request('/insights/alpha/_auth/probe', { headers: headersOf(client('read')) })).status).toBe(200)
    }
    expect(counter.calls).toBe(3)
  })
})

describe('project cache', () => {
  it('keeps a project row for its TTL, then reads it again', async () => {
    let now = 0
    const app = probeApp({ auth: { clock: () => now } }, { QUARRY_PROJECT_CACHE_TTL_S: 30 })
    await createProject(rt.runner, { id: 'delta', name: 'Delta', timezone: 'UTC', organizationId: 'org-a' })
    const tz = async () => {
      const res = await app.request('/insights/delta/_auth/probe', { headers: headersOf(client('root')) })
      return ((await res.json()) as { timezone: string }).timezone
    }
    expect(await tz()).toBe('UTC')
    await createProject(rt.runner, { id: 'delta', name: 'Delta', timezone: 'Asia/Tokyo', organizationId: 'org-a' })
    expect(await tz()).toBe('UTC')
    now += 31_000
    expect(await tz()).toBe('Asia/Tokyo')
  })

  it('does not keep a miss: a project created after a 404 is found at once', async () => {
    const app = probeApp()
    const get = async () => (await app.request('/insights/epsilon/_auth/probe', { headers: headersOf(client('root')) })).status
    expect(await get()).toBe(404)
    await createProject(rt.runner, { id: 'epsilon', name: 'Epsilon', timezone: 'UTC', organizationId: 'org-a' })
    expect(await get()).toBe(200)
  })
})

describe('logs and error bodies', () => {
  it('never contain a secret or the Authorization header', async () => {
    const lines: string[] = []
    const logger = createLogger('trace', { write: (line: string) => void lines.push(line) })
    const app = probeApp({ logger }, UNLIMITED)
    const { id, secret } = client('read')
    const wrongSecret = `sec_${'f'.repeat(48)}`
    const authorization = basic(id, secret).authorization
    const requests: Record<string, string>[] = [
      headersOf(client('read')),
      { authorization },
      { 'openpanel-client-id': id, 'openpanel-client-secret': wrongSecret },
      // A secret pasted into the id header must not be logged as an id.
      { 'openpanel-client-id': secret, 'openpanel-client-secret': secret },
      { 'x-client-id': id, 'x-client-secret': secret },
      headersOf(client('write')),
    ]
    const bodies: string[] = []
    for (const headers of requests) {
      for (const url of ['/insights/alpha/_auth/probe', '/insights/beta/_auth/probe', '/export/_auth/validated?limit=x']) {
        bodies.push(await (await app.request(url, { headers })).text())
      }
    }
    const log = lines.join('')
    expect(log).toContain('authentication failed')
    expect(log).toContain('"reason":"wrong_secret"')
    for (const text of [log, bodies.join('\n')]) {
      for (const leak of [secret, wrongSecret, authorization, authorization.slice('Basic '.length), client('write').secret]) {
        expect(text).not.toContain(leak)
      }
    }
  })
})
