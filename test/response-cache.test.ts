/**
 * The response cache changes nothing but speed: every aggregate route answers the same, header for
 * header, with and without it (first request, cached repeat, concurrent coalesced requests), and
 * it never serves what it should not (errors, other windows, data older than an insert).
 */
import { gunzipSync } from 'node:zlib'
import { decompress as zstdDecompress } from '@mongodb-js/zstd'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow, revokeClient } from '../src/auth/clients.ts'
import { createQueryGate } from '../src/clickhouse/gate.ts'
import { createQueryRunner, type QueryRunner } from '../src/clickhouse/run.ts'
import { LruCache } from '../src/http/cache/lru.ts'
import { createResponseCache, type ResponseCacheOptions } from '../src/http/cache/middleware.ts'
import { eventsWatermark } from '../src/http/cache/watermark.ts'
import { createLogger } from '../src/log.ts'
import { createProject } from '../src/projects.ts'
import { DIMENSIONS } from '../src/query/dimensions.ts'
import { buildEvents, NOW, PROJECTS } from './fixtures/insights-data.ts'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'

const U = PROJECTS.utc.id
const S = PROJECTS.sthlm.id
let rt: TestRuntime
let headers: Record<string, string>
const clock = { now: NOW }

/** A runner that counts the insights reads it passes on, and fails the next `fail` of them. */
function counting(runner: QueryRunner) {
  const counter = { reads: 0, fail: 0 }
  const wrapped: QueryRunner = {
    rows: async (stmt, opts) => {
      const insights = stmt.name.startsWith('insights_')
      if (insights) counter.reads++
      if (counter.fail > 0 && insights) {
        counter.fail--
        throw new Error('injected failure')
      }
      return runner.rows(stmt, opts)
    },
    stream: (stmt, format, opts) => runner.stream(stmt, format, opts),
    command: (stmt) => runner.command(stmt),
  }
  return { runner: wrapped, counter }
}

function apps(options: Partial<ResponseCacheOptions> = {}) {
  const plain = testApp(rt, { now: () => clock.now, responseCache: false })
  const { runner, counter } = counting(rt.runner)
  const cache = createResponseCache({ now: () => clock.now, watermark: eventsWatermark(rt.runner) }, options)
  const cached = testApp(rt, { now: () => clock.now, runner, responseCache: cache })
  return { plain, cached, cache, counter }
}

type App = ReturnType<typeof testApp>

/** Everything a client sees, minus what belongs to one exchange or to the cache itself. */
const PER_EXCHANGE = new Set(['x-request-id', 'server-timing', 'x-quarry-stats', 'x-quarry-cache', 'etag', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-limit'])
async function call(app: App, url: string, extra: Record<string, string> = {}) {
  const res = await app.request(url, { headers: { ...headers, ...extra } })
  const body = await res.text()
  const kept = [...res.headers].filter(([k]) => !PER_EXCHANGE.has(k)).sort()
  return { status: res.status, body, headers: kept, cache: res.headers.get('x-quarry-cache'), etag: res.headers.get('etag') }
}

const WINDOWS: Record<string, string>[] = [
  {},
  { range: '30d' },
  { range: '7d', timezone: 'America/New_York' },
  { startDate: '2026-03-27', endDate: '2026-04-01' },
  { range: 'lastMonth' },
  { range: '30d', filters: JSON.stringify([{ name: 'country', operator: 'is', value: ['SE', 'US'] }]) },
  { range: '30d', limit: '2' },
]
const qs = (q: Record<string, string>) => new URLSearchParams(q).toString()

const URLS: string[] = []
for (const project of [U, S]) {
  for (const w of WINDOWS) {
    for (const route of ['metrics', 'pages', ...DIMENSIONS.map((d) => d.name)]) {
      const q: Record<string, string> = { ...w }
      if (route === 'metrics') delete q.limit
      URLS.push(`http://quarry.test/insights/${project}/${route}?${qs(q)}`)
    }
  }
  URLS.push(`http://quarry.test/insights/${project}/metrics?range=30d&previous=true&interval=week`)
  URLS.push(`http://quarry.test/export/charts?projectId=${project}&series=${encodeURIComponent(JSON.stringify([{ name: 'screen_view' }, { name: '*', segment: 'user' }]))}`)
  URLS.push(`http://quarry.test/export/charts?projectId=${project}&range=7d&interval=hour&previous=true&breakdowns=${encodeURIComponent(JSON.stringify([{ name: 'country' }]))}&series=${encodeURIComponent(JSON.stringify([{ name: 'screen_view' }]))}`)
}

const UNIQUE_URLS = [...new Set(URLS)]

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000', QUARRY_AUTH_FAILURE_LIMIT: '1000000' })
  for (const p of Object.values(PROJECTS)) {
    await createProject(rt.runner, { id: p.id, name: p.id, timezone: p.timezone, organizationId: p.organizationId })
  }
  const root = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'root' })
  headers = { 'openpanel-client-id': root.id, 'openpanel-client-secret': root.secret }
  const events = buildEvents()
  const blocks: (typeof events)[] = [[], []]
  events.forEach((e, i) => blocks[i % 2]!.push(e))
  for (const values of blocks) await rt.engine.client.insert({ table: 'events', values, format: 'JSONEachRow' })
})
afterAll(() => rt?.dispose())

describe('with and without the cache', () => {
  it(`answers ${UNIQUE_URLS.length} requests the same: first, repeated, and concurrently`, async () => {
    const { plain, cached, cache } = apps()
    for (const url of UNIQUE_URLS) {
      const expected = await call(plain, url)
      expect(expected.status, url).toBe(200)
      const first = await call(cached, url)
      const again = await call(cached, url)
      expect(first.cache, url).toBe('miss')
      expect(again.cache, url).toBe('hit')
      for (const got of [first, again]) {
        expect(got.status, url).toBe(200)
        expect(got.body, url).toBe(expected.body)
        expect(got.headers, url).toEqual(expected.headers)
      }
    }
    // Concurrent identical requests on an empty cache: one runs, the others share its answer.
    cache.clear()
    for (const url of UNIQUE_URLS.filter((_, i) => i % 9 === 0)) {
      const expected = await call(plain, url)
      const together = await Promise.all(Array.from({ length: 4 }, () => call(cached, url)))
      expect(together.map((r) => r.cache).sort(), url).toEqual(['coalesced', 'coalesced', 'coalesced', 'miss'])
      for (const got of together) {
        expect(got.body, url).toBe(expected.body)
        expect(got.headers, url).toEqual(expected.headers)
      }
    }
  }, 300_000)

  it('follows cursors to the same pages', async () => {
    const { plain, cached } = apps()
    let url: string | undefined = `http://quarry.test/insights/${U}/referrer?range=30d&limit=1`
    let pages = 0
    while (url && pages < 4) {
      const expected = await call(plain, url)
      const got = await call(cached, url)
      expect(got.body).toBe(expected.body)
      expect(got.headers).toEqual(expected.headers)
      url = expected.headers.find(([k]) => k === 'x-next-cursor') ? /<([^>]+)>/.exec(expected.headers.find(([k]) => k === 'link')![1])![1] : undefined
      pages++
    }
    expect(pages).toBeGreaterThan(1)
  })
})

describe('codings', () => {
  /** The raw bytes and coding of one answer, without decoding. */
  async function raw(app: App, url: string, acceptEncoding?: string) {
    const res = await app.request(url, { headers: { ...headers, ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}) } })
    return { status: res.status, coding: res.headers.get('content-encoding'), vary: res.headers.get('vary'), cache: res.headers.get('x-quarry-cache'), bytes: Buffer.from(await res.arrayBuffer()) }
  }
  const decoded = async (r: { coding: string | null; bytes: Buffer }) =>
    r.coding === 'gzip' ? gunzipSync(r.bytes).toString('utf8') : r.coding === 'zstd' ? (await zstdDecompress(r.bytes)).toString('utf8') : r.coding === null ? r.bytes.toString('utf8') : `unexpected coding ${r.coding}`

  it('never replays an export encoded for one client to a client that asked for another coding or none', async () => {
    const { plain, cached } = apps()
    const series = encodeURIComponent(JSON.stringify([{ name: 'screen_view' }]))
    const url = `http://quarry.test/export/charts?projectId=${U}&range=30d&format=csv&series=${series}`
    const identity = await raw(plain, url)
    expect(identity.status).toBe(200)
    expect(identity.bytes.toString('utf8')).toMatch(/^"?seriesId/)
    for (const accept of ['zstd', undefined, 'gzip', undefined, 'zstd', 'gzip']) {
      const got = await raw(cached, url, accept)
      expect(got.coding, String(accept)).toBe(accept ?? null)
      expect(await decoded(got), String(accept)).toBe(identity.bytes.toString('utf8'))
    }
    // Each coding was run once and then served from the cache.
    expect((await raw(cached, url)).cache).toBe('hit')
    expect((await raw(cached, url, 'zstd')).cache).toBe('hit')
  })

  it('replays a large JSON answer gzipped to a client that accepts gzip, the same body as plain', async () => {
    const { plain, cached } = apps()
    const url = `http://quarry.test/insights/${U}/metrics?range=30d&interval=hour`
    const identity = await raw(plain, url)
    expect(identity.bytes.byteLength).toBeGreaterThan(1024)
    for (const accept of ['gzip, deflate, br', 'deflate;q=0.5, gzip', '*']) {
      // The first asks the engine ('*' is keyed as zstd, the coding an export would take).
      await raw(cached, url, accept)
      const hit = await raw(cached, url, accept)
      expect(hit.cache, accept).toBe('hit')
      expect(hit.coding, accept).toBe('gzip')
      expect(hit.vary?.toLowerCase(), accept).toContain('accept-encoding')
      expect(await decoded(hit), accept).toBe(identity.bytes.toString('utf8'))
    }
    for (const accept of [undefined, 'identity', 'gzip;q=0']) {
      const hit = await raw(cached, url, accept)
      expect(hit.coding, String(accept)).toBeNull()
      expect(hit.bytes.toString('utf8'), String(accept)).toBe(identity.bytes.toString('utf8'))
    }
  })
})

describe('what it keeps', () => {
  it('runs a cached request once, coalesced ones once', async () => {
    const { cached, counter } = apps()
    const url = `http://quarry.test/insights/${U}/country?range=30d`
    await call(cached, url)
    const reads = counter.reads
    await call(cached, url)
    await Promise.all([call(cached, `${url}&limit=3`), call(cached, `${url}&limit=3`), call(cached, `${url}&limit=3`)])
    expect(counter.reads - reads).toBe(1)
  })

  it('keys by the normalized query: parameter order does not matter, values do', async () => {
    const { cached } = apps()
    expect((await call(cached, `http://quarry.test/insights/${U}/city?range=30d&limit=5`)).cache).toBe('miss')
    expect((await call(cached, `http://quarry.test/insights/${U}/city?limit=5&range=30d`)).cache).toBe('hit')
    expect((await call(cached, `http://quarry.test/insights/${U}/city?limit=6&range=30d`)).cache).toBe('miss')
    expect((await call(cached, `http://quarry.test/insights/${S}/city?limit=6&range=30d`)).cache).toBe('miss')
  })

  it("gives a hit its own exchange's headers: request id, rate limit, CORS", async () => {
    const { cached } = apps()
    const url = `http://quarry.test/insights/${U}/os?range=30d`
    const first = await cached.request(url, { headers })
    const hit = await cached.request(url, { headers: { ...headers, 'x-request-id': 'trace.7:hit-1' } })
    expect(hit.headers.get('x-quarry-cache')).toBe('hit')
    expect(hit.headers.get('x-request-id')).toBe('trace.7:hit-1')
    // The bucket refills with time, so the count left is below the limit, the same under both names.
    expect(hit.headers.get('ratelimit-remaining')).toMatch(/^\d+$/)
    const remaining = Number(hit.headers.get('ratelimit-remaining'))
    expect(remaining).toBeLessThan(rt.config.QUARRY_RATE_LIMIT)
    expect(hit.headers.get('x-ratelimit-remaining')).toBe(String(remaining))
    expect(hit.headers.get('ratelimit-limit')).toBe(String(rt.config.QUARRY_RATE_LIMIT))
    expect(hit.headers.get('x-ratelimit-reset')).toBe(hit.headers.get('ratelimit-reset'))
    expect(hit.headers.get('access-control-allow-origin')).toBe('*')
    expect(hit.headers.get('access-control-expose-headers')).toContain('X-Quarry-Cache')
    expect(hit.headers.get('etag')).toBe(first.headers.get('etag'))
    expect(await hit.text()).toBe(await first.text())
  })

  it('serves a cached body only to a client allowed to read its project, checked on every hit', async () => {
    // No verification kept, so a revocation is seen at the next request.
    const cache = createResponseCache({ now: () => clock.now, watermark: eventsWatermark(rt.runner) })
    const cached = testApp(rt, { now: () => clock.now, responseCache: cache, config: { ...rt.config, QUARRY_AUTH_CACHE_TTL_S: 0 } })
    const url = `http://quarry.test/insights/${U}/browser?range=30d`
    const reader = await createClientRow(rt.runner, { type: 'read', projectId: U, organizationId: PROJECTS.utc.organizationId, name: 'reader' })
    const other = await createClientRow(rt.runner, { type: 'read', projectId: S, organizationId: PROJECTS.sthlm.organizationId, name: 'other' })
    const as = (c: { id: string; secret: string }) => ({ 'openpanel-client-id': c.id, 'openpanel-client-secret': c.secret })
    expect((await call(cached, url)).cache).toBe('miss')
    expect((await call(cached, url, as(reader))).cache).toBe('hit')
    const refused = async (h: Record<string, string>) => (await cached.request(url, { headers: h })).status
    expect(await refused({})).toBe(401)
    expect(await refused({ ...as(reader), 'openpanel-client-secret': `${reader.secret}0` })).toBe(401)
    expect(await refused(as(other))).toBe(403)
    await revokeClient(rt.runner, reader.id)
    expect(await refused(as(reader))).toBe(401)
    expect((await call(cached, url)).cache).toBe('hit')
  })

  it('never caches errors: parameter errors bypass, engine failures are retried', async () => {
    const { cached, counter } = apps()
    const bad = await call(cached, `http://quarry.test/insights/${U}/city?range=fortnight`)
    expect(bad.status).toBe(400)
    expect(bad.cache).toBe('bypass')
    const url = `http://quarry.test/insights/${U}/os?range=30d`
    counter.fail = 1
    const failed = await call(cached, url)
    expect(failed.status).toBe(500)
    const retried = await call(cached, url)
    expect(retried.status).toBe(200)
    expect(retried.cache).toBe('miss')
  })

  it('shares no failure between coalesced requests: each waiter runs its own', async () => {
    const { plain, cached, counter } = apps()
    const url = `http://quarry.test/insights/${U}/brand?range=30d`
    counter.fail = 1
    const [a, b] = await Promise.all([call(cached, url), call(cached, url)])
    expect([a.status, b.status].sort()).toEqual([200, 500])
    expect((a.status === 200 ? a : b).body).toBe((await call(plain, url)).body)
  })

  it('never caches /live, whose window ends at the request\'s millisecond', async () => {
    const { plain, cached } = apps()
    const url = `http://quarry.test/insights/${U}/live`
    for (let i = 0; i < 2; i++) {
      const got = await call(cached, url)
      expect(got.cache).toBe('bypass')
      expect(got.etag).toBeNull()
      expect(got.body).toBe((await call(plain, url)).body)
    }
  })

  it('is off unless the app is given one', async () => {
    const plain = testApp(rt, { now: () => clock.now })
    const got = await call(plain, `http://quarry.test/insights/${U}/country?range=30d`)
    expect(got.status).toBe(200)
    expect(got.cache).toBeNull()
    expect(got.etag).toBeNull()
  })

  it('does not cache explain=sql', async () => {
    const { cached } = apps()
    const url = `http://quarry.test/insights/${U}/device?range=30d&explain=sql`
    const first = await call(cached, url)
    expect(first.status).toBe(200)
    expect(first.cache).toBe('bypass')
    expect(JSON.parse(first.body).sql).toHaveLength(1)
  })

  it('resolves the window at request time: the same range=30d is another key the next day', async () => {
    const { cached } = apps()
    const url = `http://quarry.test/insights/${U}/referrer_type?range=30d`
    expect((await call(cached, url)).cache).toBe('miss')
    clock.now = new Date(NOW.getTime() + 86_400_000)
    try {
      expect((await call(cached, url)).cache).toBe('miss')
    } finally {
      clock.now = NOW
    }
    expect((await call(cached, url)).cache).toBe('hit')
  })

  it('expires entries whose window reaches now after nowTtlMs, closed windows later', async () => {
    const { cached } = apps({ nowTtlMs: 50, closedTtlMs: 60_000 })
    const open = `http://quarry.test/insights/${U}/utm_source?range=7d`
    const closed = `http://quarry.test/insights/${U}/utm_source?startDate=2026-03-01&endDate=2026-03-31`
    await call(cached, open)
    await call(cached, closed)
    await new Promise((r) => setTimeout(r, 80))
    expect((await call(cached, open)).cache).toBe('miss')
    expect((await call(cached, closed)).cache).toBe('hit')
  })

  it('bounds memory: least recently used entries leave first', () => {
    const lru = new LruCache(1000, 3)
    const entry = (key: string, size: number) => ({ key, status: 200, headers: [], body: new Uint8Array(size), bytes: size, expires: Infinity })
    for (const k of ['a', 'b', 'c']) lru.set(entry(k, 100))
    lru.get('a', 0)
    lru.set(entry('d', 100))
    expect(lru.get('b', 0)).toBeUndefined()
    expect(lru.get('a', 0)).toBeDefined()
    lru.set(entry('e', 900))
    expect(lru.size).toBe(2)
    expect(lru.get('a', 0)).toBeDefined()
    expect(lru.bytes).toBeLessThanOrEqual(1000)
    lru.set(entry('huge', 5000))
    expect(lru.get('huge', 0)).toBeUndefined()
  })
})

describe('while the queries in progress would keep a new one waiting too long', () => {
  /**
   * An app whose gate has one slot, cached once and its pace measured (the request ran alone: its
   * time is one turn); then the slot held and eight requests that query waiting behind it, so that
   * by the pace a ninth query would wait eight turns. `watermarkTtlMs`: how long the watermark read
   * by the first request stands.
   */
  async function saturated(watermarkTtlMs: number) {
    const gate = createQueryGate({ concurrency: 1, maxQueued: 64 })
    const runner = createQueryRunner(rt.engine, gate, createLogger('silent'))
    const config = { ...rt.config, QUARRY_MAX_CONCURRENT_QUERIES: 1, QUARRY_MAX_QUEUE_WAIT_MS: 20 }
    const cache = createResponseCache({ now: () => clock.now, watermark: eventsWatermark(runner) }, { watermarkTtlMs })
    const app = testApp(rt, { now: () => clock.now, runner, config, responseCache: cache })
    const url = (startDay: number) => `http://quarry.test/insights/${U}/metrics?startDate=2026-03-${String(startDay).padStart(2, '0')}&endDate=2026-04-01`
    const watermarkRead = performance.now()
    expect((await call(app, url(1))).cache).toBe('miss')
    let release = () => {}
    const held = gate.run(() => new Promise<void>((done) => (release = done)))
    const days = [2, 3, 4, 5, 6, 7, 8, 9]
    const queued = days.map((day) => call(app, url(day)))
    for (let i = 0; gate.queued < days.length; i++) {
      if (i > 500) throw new Error(`only ${gate.queued} of ${days.length} requests reached the gate`)
      await new Promise((r) => setTimeout(r, 10))
    }
    return {
      app,
      url,
      watermarkRead,
      release: () => release(),
      /** Releases the slot; the queued requests are then answered from the engine. */
      async drain() {
        release()
        await held
        expect((await Promise.all(queued)).map((r) => [r.status, r.cache])).toEqual(days.map(() => [200, 'miss']))
      },
    }
  }

  it('answers hits and the requests coalesced onto one in flight, and refuses (503) only a request that would queue', async () => {
    // The watermark read once, not again behind the held slot.
    const { app, url, drain } = await saturated(600_000)
    const coalesced = [call(app, url(8)), call(app, url(9))]
    const hit = await call(app, url(1))
    expect(hit.status).toBe(200)
    expect(hit.cache).toBe('hit')
    const refused = await call(app, url(10))
    expect(refused.status).toBe(503)
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'overloaded', message: 'Quarry is busy; retry shortly' })
    await drain()
    expect((await Promise.all(coalesced)).map((r) => [r.status, r.cache])).toEqual([[200, 'coalesced'], [200, 'coalesced']])
  })

  it('with the watermark due, refuses at once a request the cache has nothing for, instead of after the watermark read; a hit still waits for it', async () => {
    const { app, url, watermarkRead, release, drain } = await saturated(1_000)
    // The watermark is due: reading it again would wait for the held slot too.
    await new Promise((r) => setTimeout(r, Math.max(0, watermarkRead + 1_100 - performance.now())))
    const asked = performance.now()
    const refused = await Promise.race([call(app, url(20)), new Promise<undefined>((r) => setTimeout(r, 2_000))])
    const tookMs = performance.now() - asked
    if (!refused) release()
    expect(refused?.status).toBe(503)
    expect(tookMs).toBeLessThan(500)
    // Cached under the last watermark: it waits for the new one, then is answered from the cache.
    let hitDone = false
    const hit = call(app, url(1)).finally(() => (hitDone = true))
    await new Promise((r) => setTimeout(r, 100))
    expect(hitDone).toBe(false)
    await drain()
    expect(await hit).toMatchObject({ status: 200, cache: 'hit' })
  })
})

describe('ETag and the data watermark', () => {
  it('answers If-None-Match with 304 until an insert changes the data, then with the new body', async () => {
    const { plain, cached } = apps({ watermarkTtlMs: 0 })
    const url = `http://quarry.test/insights/${U}/metrics?range=30d`
    const first = await call(cached, url)
    expect(first.etag).toMatch(/^W\/"[\w-]+"$/)
    const revalidated = await cached.request(url, { headers: { ...headers, 'if-none-match': first.etag! } })
    expect(revalidated.status).toBe(304)
    expect(revalidated.headers.get('etag')).toBe(first.etag)
    expect(await revalidated.text()).toBe('')
    // Without the cache the ETag is the same and still revalidates (no body is kept).
    const etagOnly = createResponseCache({ now: () => clock.now, watermark: eventsWatermark(rt.runner) }, { store: false })
    const lean = testApp(rt, { now: () => clock.now, responseCache: etagOnly })
    expect((await lean.request(url, { headers: { ...headers, 'if-none-match': first.etag! } })).status).toBe(304)

    await rt.engine.client.insert({
      table: 'events',
      format: 'JSONEachRow',
      values: [{ id: '00000000-0000-4000-8000-00000000beef', name: 'screen_view', device_id: 'late', profile_id: 'late', project_id: U, session_id: 'late-session', created_at: '2026-04-10 12:00:00.000', path: '/late', origin: 'https://late.example' }],
    })
    const after = await cached.request(url, { headers: { ...headers, 'if-none-match': first.etag! } })
    expect(after.status).toBe(200)
    expect(after.headers.get('x-quarry-cache')).toBe('miss')
    expect(after.headers.get('etag')).not.toBe(first.etag)
    const body = await after.text()
    expect(body).toBe((await call(plain, url)).body)
    expect(body).not.toBe(first.body)
  })
})
