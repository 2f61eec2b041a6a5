export class OverloadedError extends Error {
  constructor(message = 'too many queries are waiting for the engine') {
    super(message)
  }
}

export interface GateRunOptions {
  /**
   * A small lookup many requests wait on (the cache's data watermark): it goes ahead of the queue,
   * since holding it back would hold back every request waiting for it, and it costs next to nothing.
   */
  urgent?: boolean
  /**
   * The caller already had work done for the same request: refusing this query now would throw that
   * work away and answer 503 late, and queueing it behind new requests would make the request late.
   * It goes ahead of the queue too; only the hard limits (maxQueued, maxWaitMs) apply to it, and new
   * requests' first queries are judged against the backlog it adds.
   */
  committed?: boolean
}

export interface QueryGate {
  run<T>(task: () => Promise<T>, options?: GateRunOptions): Promise<T>
  readonly active: number
  readonly queued: number
}

/** Weight of the newest gap between completions in their moving average. */
const EWMA_WEIGHT = 0.2

interface Waiter {
  start(): void
  refused: boolean
}

/**
 * Bounds the ClickHouse work in flight. Past `maxQueued` waiting tasks it refuses at once instead
 * of letting the queue (and memory) grow without limit.
 *
 * Refusals are meant to be immediate: a query that will not start in time is refused on arrival,
 * judging by how fast the gate has been finishing tasks while busy, when its wait would pass
 * `queueWaitMs`. A queue that drains more slowly than that is not absorbing a burst but hiding an
 * overload: its callers would wait before even starting, and the backlog left when a burst ends
 * would keep idle latency high for as long as it takes to drain. `maxWaitMs` is the backstop for a
 * misjudged pace (the engine slowing down): no task waits longer than that for a slot.
 */
export function createQueryGate(opts: { concurrency: number; maxQueued: number; maxWaitMs?: number; queueWaitMs?: number }): QueryGate {
  const urgent: Waiter[] = []
  const normal: Waiter[] = []
  let active = 0
  /** Refused tasks still in a queue (each is skipped when its turn comes). */
  let abandoned = 0
  const waiting = () => urgent.length + normal.length - abandoned
  /** Moving average of the time between two completions while tasks were waiting (0: not known yet). */
  let gapMs = 0
  let lastDone = 0
  const admitWithinMs = opts.queueWaitMs ?? opts.maxWaitMs

  const next = () => {
    while (active < opts.concurrency) {
      const waiter = urgent.shift() ?? normal.shift()
      if (!waiter) return
      if (waiter.refused) {
        abandoned--
        continue
      }
      waiter.start()
    }
  }

  const finished = () => {
    active--
    const now = performance.now()
    // Only a gap during which the gate stayed saturated measures how fast it serves.
    if (lastDone > 0 && waiting() > 0) gapMs = gapMs === 0 ? now - lastDone : gapMs * (1 - EWMA_WEIGHT) + (now - lastDone) * EWMA_WEIGHT
    lastDone = waiting() > 0 ? now : 0
    next()
  }

  const launch = <T>(task: () => Promise<T>): Promise<T> => {
    active++
    let result: Promise<T>
    try {
      result = task()
    } catch (err) {
      result = Promise.reject(err)
    }
    return result.finally(finished)
  }

  return {
    run<T>(task: () => Promise<T>, options: GateRunOptions = {}): Promise<T> {
      if (active < opts.concurrency && waiting() === 0) return launch(task)
      if (waiting() >= opts.maxQueued) return Promise.reject(new OverloadedError())
      const first = !options.urgent && !options.committed
      const ahead = waiting()
      if (first && admitWithinMs !== undefined && ahead > 0 && gapMs > 0 && (ahead + 1) * gapMs > admitWithinMs) {
        return Promise.reject(new OverloadedError(`the queue would not reach this query within ${admitWithinMs} ms`))
      }
      return new Promise<T>((resolve, reject) => {
        const maxWaitMs = opts.maxWaitMs
        const timer =
          maxWaitMs === undefined
            ? undefined
            : setTimeout(() => {
                waiter.refused = true
                abandoned++
                reject(new OverloadedError(`no query slot within ${maxWaitMs} ms`))
              }, maxWaitMs)
        timer?.unref?.()
        const waiter: Waiter = {
          refused: false,
          start() {
            clearTimeout(timer)
            launch(task).then(resolve, reject)
          },
        }
        ;(first ? normal : urgent).push(waiter)
      })
    },
    get active() {
      return active
    },
    get queued() {
      return waiting()
    },
  }
}
