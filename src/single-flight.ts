/** Concurrent calls for the same key share one run of `fn` instead of each starting their own. */
export class SingleFlight<V> {
  readonly #flights = new Map<string, Promise<V>>()

  /** Whether a run for the key is under way. */
  has(key: string): boolean {
    return this.#flights.has(key)
  }

  run(key: string, fn: () => Promise<V>): Promise<V> {
    const pending = this.#flights.get(key)
    if (pending) return pending
    const flight = fn().finally(() => this.#flights.delete(key))
    this.#flights.set(key, flight)
    return flight
  }
}
