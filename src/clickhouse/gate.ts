import pLimit from 'p-limit'

export class OverloadedError extends Error {
  constructor(message = 'too many queries are waiting for the engine') {
    super(message)
  }
}

export interface QueryGate {
  run<T>(task: () => Promise<T>): Promise<T>
  readonly active: number
  readonly queued: number
}

/** Weight of the newest gap between completions in their moving average. */
const EWMA_WEIGHT = 0.2

/**
 * Bounds the ClickHouse work in flight. Past `maxQueued` waiting tasks it refuses at once
 * instead of letting the queue (and memory) grow without limit.
 *
 * With `maxWaitMs`, no task waits longer than that for a slot: a queue that drains so slowly is
 * not absorbing a burst but hiding an overload, and its callers would wait as long as a query may
 * run before even starting. A task that reaches the limit is refused; and one that would, judging
 * by how fast the gate has been finishing tasks while busy, is refused on arrival, so that under
 * overload the refusals are immediate and the queue holds no more than can be served in time.
 */
export function createQueryGate(opts: { concurrency: number; maxQueued: number; maxWaitMs?: number }): QueryGate {
  const limit = pLimit(opts.concurrency)
  /** Refused tasks still in p-limit's queue (each ends at once when its turn comes). */
  let abandoned = 0
  const waiting = () => limit.pendingCount - abandoned
  /** Moving average of the time between two completions while tasks were waiting (0: not known yet). */
  let gapMs = 0
  let lastDone = 0

  const finished = () => {
    const now = performance.now()
    // Only a gap during which the gate stayed saturated measures how fast it serves.
    if (lastDone > 0 && waiting() > 0) gapMs = gapMs === 0 ? now - lastDone : gapMs * (1 - EWMA_WEIGHT) + (now - lastDone) * EWMA_WEIGHT
    lastDone = waiting() > 0 ? now : 0
  }

  const measured = <T>(task: () => Promise<T>) => async () => {
    try {
      return await task()
    } finally {
      finished()
    }
  }

  return {
    run<T>(task: () => Promise<T>): Promise<T> {
      if (limit.activeCount >= opts.concurrency && waiting() >= opts.maxQueued) {
        return Promise.reject(new OverloadedError())
      }
      const maxWaitMs = opts.maxWaitMs
      if (maxWaitMs === undefined) return limit(measured(task))
      if (waiting() > 0 && gapMs > 0 && (waiting() + 1) * gapMs > maxWaitMs) {
        return Promise.reject(new OverloadedError(`the queue would not reach this query within ${maxWaitMs} ms`))
      }
      return new Promise<T>((resolve, reject) => {
        let state: 'waiting' | 'started' | 'refused' = 'waiting'
        const timer = setTimeout(() => {
          if (state !== 'waiting') return
          state = 'refused'
          abandoned++
          reject(new OverloadedError(`no query slot within ${maxWaitMs} ms`))
        }, maxWaitMs)
        timer.unref?.()
        // A refused task keeps its place in p-limit's queue until its turn, when it ends at once.
        limit(async () => {
          if (state === 'refused') {
            abandoned--
            return
          }
          state = 'started'
          clearTimeout(timer)
          await measured(task)().then(resolve, reject)
        }).catch(reject)
      })
    },
    get active() {
      return limit.activeCount
    },
    get queued() {
      return waiting()
    },
  }
}
