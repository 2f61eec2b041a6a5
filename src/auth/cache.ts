import { BoundedMap } from './bounded-map.ts'

interface Entry<V> {
  value: V
  expiresAt: number
}

/** Values that are good for `ttlMs`; a TTL of 0 disables caching altogether. */
export class TtlCache<V> {
  readonly #entries: BoundedMap<Entry<V>>

  constructor(
    private readonly ttlMs: number,
    private readonly clock: () => number,
    maxKeys = 10_000,
  ) {
    this.#entries = new BoundedMap({
      maxKeys,
      sweepEveryMs: Math.max(ttlMs, 1000),
      isIdle: (entry, now) => entry.expiresAt <= now,
    })
  }

  /** The value while it is fresh. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key)
    return entry && entry.expiresAt > this.clock() ? entry.value : undefined
  }

  /** The value even after it expired, until it is swept: what a refresh can compare against. */
  stale(key: string): V | undefined {
    return this.#entries.get(key)?.value
  }

  set(key: string, value: V): void {
    if (this.ttlMs <= 0) return
    const now = this.clock()
    this.#entries.set(key, { value, expiresAt: now + this.ttlMs }, now)
  }

  delete(key: string): void {
    this.#entries.delete(key)
  }
}

/** Concurrent calls for the same key share one run of `fn` instead of each starting their own. */
export class SingleFlight<V> {
  readonly #flights = new Map<string, Promise<V>>()

  run(key: string, fn: () => Promise<V>): Promise<V> {
    const pending = this.#flights.get(key)
    if (pending) return pending
    const flight = fn().finally(() => this.#flights.delete(key))
    this.#flights.set(key, flight)
    return flight
  }
}
