/**
 * A Map for per-key state keyed by outside input (client ids, addresses, credentials) that cannot
 * grow without bound: entries that report themselves idle are swept out at most once per
 * `sweepEveryMs`, and at `maxKeys` the oldest key gives way to the new one.
 */
export class BoundedMap<V> {
  readonly #map = new Map<string, V>()
  #sweptAt = Number.NEGATIVE_INFINITY

  constructor(
    private readonly opts: { maxKeys: number; sweepEveryMs: number; isIdle: (value: V, now: number) => boolean },
  ) {}

  get size(): number {
    return this.#map.size
  }

  get(key: string): V | undefined {
    return this.#map.get(key)
  }

  delete(key: string): void {
    this.#map.delete(key)
  }

  set(key: string, value: V, now: number): void {
    if (now - this.#sweptAt >= this.opts.sweepEveryMs) {
      this.#sweptAt = now
      for (const [k, v] of this.#map) if (this.opts.isIdle(v, now)) this.#map.delete(k)
    }
    if (!this.#map.has(key) && this.#map.size >= this.opts.maxKeys) {
      const oldest = this.#map.keys().next()
      if (!oldest.done) this.#map.delete(oldest.value)
    }
    this.#map.set(key, value)
  }
}
