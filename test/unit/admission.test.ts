import { type Context, Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import type { AppEnv } from '../../src/app-env.ts'
import { emptyStats } from '../../src/clickhouse/run.ts'
import { OverloadedError } from '../../src/clickhouse/gate.ts'
import { admission, admitted } from '../../src/http/admission.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** One slot's worth of work per request: each takes `ms` and runs one query, one at a time. */
function app(opts: Parameters<typeof admission>[0], ms: number, write: Promise<unknown> = Promise.resolve()) {
  const app = new Hono<AppEnv>()
  let busy: Promise<unknown> = Promise.resolve()
  app.use('*', admission(opts))
  // A cache hit is answered before the point where admission's verdict is carried out, as in app.ts.
  app.get('/hit', async (c) => {
    c.set('stats', emptyStats())
    await sleep(1)
    return c.text('hit')
  })
  app.use('*', admitted)
  /** Asks for a query, waits for `shared` first when given (outside any slot), then takes its turn. */
  const query = async (c: Context<AppEnv>, shared?: Promise<unknown>) => {
    const stats = emptyStats()
    c.set('stats', stats)
    stats.asked = 1
    if (shared) {
      stats.waited = 1
      await shared
    }
    const turn = busy.then(() => sleep(ms))
    busy = turn
    await turn
    stats.queries = 1
    return c.text('done')
  }
  app.get('/work', (c) => query(c))
  // A request that waits for shared work (a snapshot write) outside any slot, then takes its turn.
  app.get('/after-write', (c) => query(c, write))
  app.onError((err, c) => c.text(err instanceof OverloadedError ? `refused: ${err.message}` : 'other', 503))
  return app
}

async function timedRequest(a: ReturnType<typeof app>) {
  const started = performance.now()
  const res = await a.request('/work')
  return { status: res.status, body: await res.text(), ms: performance.now() - started }
}

describe('admission with a pace', () => {
  it('refuses at once a request that would wait for the ones ahead longer than queueWaitMs, and serves the rest', async () => {
    const a = app({ limit: 1000, pace: { slots: 1, queueWaitMs: 100 } }, 40)
    // Alone, a request takes ~40 ms: the pace until a saturated one is measured.
    for (let i = 0; i < 3; i++) expect((await timedRequest(a)).status).toBe(200)
    // Ten at once on one slot: the k-th waits ~k × 40 ms; within 100 ms are the first three (two to
    // four, as the measured pace comes out on a busy machine).
    const results = await Promise.all(Array.from({ length: 10 }, () => timedRequest(a)))
    const served = results.filter((r) => r.status === 200)
    const refused = results.filter((r) => r.status === 503)
    expect(served.length).toBeGreaterThanOrEqual(2)
    expect(served.length).toBeLessThanOrEqual(4)
    // Refused before any wait: the first refused would otherwise have waited ~80 ms or more.
    for (const r of refused) {
      expect(r.body).toBe('refused: the requests ahead would not be through within 100 ms')
      expect(r.ms).toBeLessThan(75)
    }
    // Once through, the next request is admitted again.
    expect((await timedRequest(a)).status).toBe(200)
  })

  it('does not count requests that asked for no query as ahead, nor refuse them on the pace of those that did', async () => {
    const a = app({ limit: 1000, pace: { slots: 1, queueWaitMs: 100 } }, 40)
    // A pace of ~40 ms per request on one slot, measured while saturated.
    await Promise.all(Array.from({ length: 3 }, () => timedRequest(a)))
    // 50 hits at once: by that pace the last would wait 49 × 40 ms, but none waits for the engine.
    const hits = await Promise.all(Array.from({ length: 50 }, () => Promise.resolve(a.request('/hit')).then((r) => r.status)))
    expect(hits.filter((s) => s === 200)).toHaveLength(50)
    // Hits in progress do not hold up a request that queries either.
    const [work] = await Promise.all([timedRequest(a), ...Array.from({ length: 20 }, () => a.request('/hit'))])
    expect(work.status).toBe(200)
  })

  it('answers a cache hit that arrives while the queue is too long, and still refuses a request that would join it', async () => {
    const a = app({ limit: 1000, pace: { slots: 1, queueWaitMs: 100 } }, 40)
    // A pace of ~40 ms a turn, measured while saturated.
    await Promise.all(Array.from({ length: 3 }, () => timedRequest(a)))
    // Ten queries in progress on one slot, as when a warm cache's entries expire at once: by the pace
    // the next request to query would wait ~400 ms.
    const queued = Array.from({ length: 10 }, () => a.request('/work'))
    await sleep(5)
    const [hits, work] = await Promise.all([
      Promise.all(Array.from({ length: 20 }, () => Promise.resolve(a.request('/hit')).then((r) => r.status))),
      timedRequest(a),
    ])
    expect(hits.filter((s) => s === 200)).toHaveLength(20)
    expect(work.status).toBe(503)
    expect(work.body).toBe('refused: the requests ahead would not be through within 100 ms')
    expect(work.ms).toBeLessThan(75)
    await Promise.all(queued)
  })

  it('does not take the time between two queries, while only requests that query none were in progress, for a turn', async () => {
    const a = app({ limit: 1000, pace: { slots: 1, queueWaitMs: 100 } }, 40)
    // A pace of ~40 ms a turn, measured while saturated.
    await Promise.all(Array.from({ length: 3 }, () => timedRequest(a)))
    // Cache hits keep arriving, as under a warm cache at c=32; queries come one at a time, 400 ms apart
    // (a warm cache's entries expiring). Had each gap counted, the pace would be ~120 ms a turn.
    let hitting = true
    const hits = Array.from({ length: 4 }, async () => {
      // A refused hit returns without a timer: yield, or the loop would starve the others.
      while (hitting) await Promise.all([a.request('/hit'), sleep(1)])
    })
    const statuses: number[] = []
    try {
      for (let i = 0; i < 2; i++) {
        await sleep(400)
        statuses.push((await timedRequest(a)).status)
      }
      // Two at once: the second waits one turn (~40 ms), within 100 ms.
      for (const r of await Promise.all([timedRequest(a), timedRequest(a)])) statuses.push(r.status)
    } finally {
      hitting = false
      await Promise.all(hits)
    }
    expect(statuses).toEqual([200, 200, 200, 200])
  })

  it('does not take the time requests waited for shared work for a turn', async () => {
    const a = app({ limit: 1000, pace: { slots: 1, queueWaitMs: 100 } }, 40, sleep(300))
    // One request takes its turn while three wait ~300 ms for a write, then take theirs one by one:
    // had the 300 ms before the first of them counted, the pace would be 200–300 ms a turn.
    const first = await Promise.all([timedRequest(a), ...Array.from({ length: 3 }, () => a.request('/after-write'))])
    expect(first.map((r) => r.status)).toEqual([200, 200, 200, 200])
    // Two at once: the second waits one turn (~40 ms), within 100 ms.
    const both = await Promise.all([timedRequest(a), timedRequest(a)])
    expect(both.map((r) => r.status)).toEqual([200, 200])
  })

  it('does not count as ahead a request whose client has gone', async () => {
    const a = app({ limit: 1000, pace: { slots: 1, queueWaitMs: 100 } }, 40)
    await Promise.all(Array.from({ length: 3 }, () => timedRequest(a)))
    // Ten queries whose clients leave at once: by the pace the next would wait ~400 ms behind them.
    const gone = Array.from({ length: 10 }, () => new AbortController())
    const abandoned = gone.map((abort) => Promise.resolve(a.request('/work', { signal: abort.signal })))
    for (const abort of gone) abort.abort()
    const next = await timedRequest(a)
    expect(next.status).toBe(200)
    await Promise.all(abandoned)
  })

  it('without a pace, only the limit on requests in progress refuses', async () => {
    const a = app({ limit: 4 }, 20)
    const results = await Promise.all(Array.from({ length: 10 }, () => timedRequest(a)))
    expect(results.filter((r) => r.status === 200)).toHaveLength(4)
    expect(results.filter((r) => r.body === 'refused: too many queries are waiting for the engine')).toHaveLength(6)
  })
})
