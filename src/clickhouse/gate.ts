import pLimit from 'p-limit'

export class OverloadedError extends Error {
  constructor() {
    super('too many queries are waiting for the engine')
  }
}

export interface QueryGate {
  run<T>(task: () => Promise<T>): Promise<T>
  readonly active: number
  readonly queued: number
}

/**
 * Bounds the ClickHouse work in flight. Past `maxQueued` waiting tasks it refuses at once
 * instead of letting the queue (and memory) grow without limit.
 */
export function createQueryGate(opts: { concurrency: number; maxQueued: number }): QueryGate {
  const limit = pLimit(opts.concurrency)
  return {
    run(task) {
      if (limit.activeCount >= opts.concurrency && limit.pendingCount >= opts.maxQueued) {
        return Promise.reject(new OverloadedError())
      }
      return limit(task)
    },
    get active() {
      return limit.activeCount
    },
    get queued() {
      return limit.pendingCount
    },
  }
}
