import { describe, expect, it } from 'vitest'
import { createQueryGate, OverloadedError, type GateRunOptions, type QueryGate } from '../../src/clickhouse/gate.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const tick = () => sleep(1)

/** Runs a task of `ms` through the gate; resolves to what happened to it, and when. */
function submit(gate: QueryGate, ms: number, order: string[], name: string, options?: GateRunOptions) {
  const asked = performance.now()
  return gate
    .run(async () => {
      order.push(name)
      await sleep(ms)
      return 'ran'
    }, options)
    .then(
      (outcome) => ({ outcome, ms: performance.now() - asked }),
      (err: Error) => ({ outcome: err instanceof OverloadedError ? `refused: ${err.message}` : 'other', ms: performance.now() - asked }),
    )
}

/** Keeps one slot busy with 40 ms tasks and three waiting until the gate has measured its pace. */
async function learnPace(gate: QueryGate, order: string[]) {
  const warm = [0, 1, 2, 3, 4, 5].map((i) => submit(gate, 40, order, `warm${i}`))
  await Promise.all(warm)
}

describe('the query gate', () => {
  it('refuses at once a query the queue would not start within queueWaitMs, and serves the ones it queued', async () => {
    const gate = createQueryGate({ concurrency: 1, maxQueued: 64, maxWaitMs: 10_000, queueWaitMs: 130 })
    const order: string[] = []
    await learnPace(gate, order)
    // Tasks of 40 ms on one slot: the third waiting would start after ~120 ms, the fourth ~160.
    const queued = [0, 1, 2, 3, 4, 5].map((i) => submit(gate, 40, order, `q${i}`))
    const results = await Promise.all(queued)
    const refused = results.filter((r) => r.outcome.startsWith('refused'))
    const served = results.filter((r) => r.outcome === 'ran')
    // One runs, about three wait (the pace is an average), the rest are refused.
    expect(served.length).toBeGreaterThanOrEqual(3)
    expect(served.length).toBeLessThanOrEqual(5)
    expect(refused.length).toBe(6 - served.length)
    for (const r of refused) {
      expect(r.outcome).toMatch(/the queue would not reach this query within 130 ms/)
      expect(r.ms).toBeLessThan(20)
    }
    // What it queued started within about queueWaitMs (plus one task's length of misjudgement).
    for (const r of served) expect(r.ms).toBeLessThan(130 + 40 + 40 + 30)
    expect(gate.active + gate.queued).toBe(0)
  })

  it('starts an urgent query ahead of the queue and never refuses it for the queue\'s length', async () => {
    const gate = createQueryGate({ concurrency: 1, maxQueued: 64, maxWaitMs: 10_000, queueWaitMs: 50 })
    const order: string[] = []
    await learnPace(gate, order)
    order.length = 0
    const running = submit(gate, 40, order, 'running')
    await tick()
    const waiting = [submit(gate, 10, order, 'n0')]
    await tick()
    const urgent = submit(gate, 5, order, 'urgent', { urgent: true })
    const results = await Promise.all([running, ...waiting, urgent])
    expect(results.map((r) => r.outcome)).toEqual(['ran', 'ran', 'ran'])
    expect(order).toEqual(['running', 'urgent', 'n0'])
  })

  it('serves a request\'s later query ahead of new requests, refusing it only past maxQueued', async () => {
    const gate = createQueryGate({ concurrency: 1, maxQueued: 3, maxWaitMs: 10_000, queueWaitMs: 50 })
    const order: string[] = []
    await learnPace(gate, order)
    const all = [submit(gate, 40, order, 'a'), submit(gate, 40, order, 'b'), submit(gate, 40, order, 'c'), submit(gate, 40, order, 'd', { committed: true }), submit(gate, 40, order, 'e', { committed: true })]
    const results = await Promise.all(all)
    // a runs; b waits first; c would start after ~80 ms (refused); d and e, committed, wait (2 < 3)
    // ahead of b.
    expect(results.map((r) => r.outcome.split(':')[0])).toEqual(['ran', 'ran', 'refused', 'ran', 'ran'])
    expect(order.slice(-4)).toEqual(['a', 'd', 'e', 'b'])
    const full = createQueryGate({ concurrency: 1, maxQueued: 1 })
    const first = submit(full, 30, order, 'x')
    const second = submit(full, 30, order, 'y', { committed: true })
    const third = await submit(full, 30, order, 'z', { committed: true })
    expect(third.outcome).toBe('refused: too many queries are waiting for the engine')
    expect((await Promise.all([first, second])).map((r) => r.outcome)).toEqual(['ran', 'ran'])
  })

  it('still refuses, after maxWaitMs, a query whose slot did not come when the pace misjudged it', async () => {
    const gate = createQueryGate({ concurrency: 1, maxQueued: 8, maxWaitMs: 80, queueWaitMs: 1000 })
    const order: string[] = []
    const slow = submit(gate, 200, order, 'slow')
    await tick()
    const waiting = await submit(gate, 10, order, 'waiting')
    expect(waiting.outcome).toBe('refused: no query slot within 80 ms')
    expect(waiting.ms).toBeGreaterThanOrEqual(75)
    expect((await slow).outcome).toBe('ran')
    // The refused task never runs, and leaves nothing behind.
    expect(order).toEqual(['slow'])
    expect(gate.active + gate.queued).toBe(0)
  })
})
