import { LRUCache } from 'lru-cache'

/**
 * Values that are good for `ttlMs` by `clock`; a TTL of 0 disables caching altogether. At most
 * `maxKeys` are held, least recently used first out.
 */
export class TtlCache<V extends {}> {
  readonly #entries: LRUCache<string, V>

  constructor(
    private readonly ttlMs: number,
    clock: () => number,
    maxKeys = 10_000,
  ) {
    this.#entries = new LRUCache({
      max: maxKeys,
      ttl: ttlMs,
      // lru-cache takes a start time of 0 for "no TTL", and a test clock may well read 0.
      perf: { now: () => clock() + 1 },
      // Read the clock at every check: by default lru-cache keeps a reading for 1 ms on a timer.
      ttlResolution: 0,
      // An expired value stays until evicted, for stale().
      noDeleteOnStaleGet: true,
    })
  }

  /** The value while it is fresh. */
  get(key: string): V | undefined {
    return this.#entries.get(key)
  }

  /** The value even after it expired, until it is evicted: what a refresh can compare against. */
  stale(key: string): V | undefined {
    return this.#entries.peek(key, { allowStale: true })
  }

  set(key: string, value: V): void {
    if (this.ttlMs <= 0) return
    this.#entries.set(key, value)
  }

  delete(key: string): void {
    this.#entries.delete(key)
  }
}
