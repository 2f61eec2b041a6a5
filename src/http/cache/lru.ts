import { LRUCache } from 'lru-cache'

/** A response as it is kept and replayed. */
export interface Entry {
  key: string
  status: number
  headers: [string, string][]
  body: Uint8Array<ArrayBuffer>
  /** The body gzipped once, where compression would gzip it for every client that accepts it. */
  gzip?: Uint8Array<ArrayBuffer>
  /** What it is counted as against maxBytes: body, headers, key and bookkeeping. */
  bytes: number
  expires: number
}

/**
 * Responses bounded by `maxBytes` and `maxEntries`, least recently used first out; one larger than
 * `maxBytes` is not kept. Each entry carries its own expiry, checked against the `now` of the
 * request asking.
 */
export class LruCache {
  readonly #entries: LRUCache<string, Entry>

  constructor(maxBytes: number, maxEntries: number) {
    this.#entries = new LRUCache({ max: maxEntries, maxSize: maxBytes, sizeCalculation: (entry) => entry.bytes })
  }

  get(key: string, now: number): Entry | undefined {
    const entry = this.#entries.get(key)
    if (entry && entry.expires <= now) {
      this.#entries.delete(key)
      return undefined
    }
    return entry
  }

  set(entry: Entry): void {
    this.#entries.set(entry.key, entry)
  }

  clear(): void {
    this.#entries.clear()
  }

  get size() {
    return this.#entries.size
  }

  get bytes() {
    return this.#entries.calculatedSize
  }
}
