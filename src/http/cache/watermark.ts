import type { QueryRunner } from '../../clickhouse/run.ts'
import { SingleFlight } from '../../single-flight.ts'

/**
 * The data watermark: a cheap number that changes with every insert into events. It is `count()`
 * of `events`, answered from part metadata, so it costs one small query however large the table.
 * An insert anywhere changes it, which retires every cached body and every ETag handed out.
 * Ingestion only inserts (principle 2), so a changed count is what "the data changed" means; an
 * `ALTER UPDATE` of events would not be seen until the entries expire.
 */
export function eventsWatermark(runner: QueryRunner, timeoutS = 10): () => Promise<string> {
  return async () => {
    const [row] = await runner.rows<{ n: number | string }>(
      { name: 'cache_watermark', sql: 'SELECT count() AS n FROM events', params: {} },
      // Every cacheable request waits for this read: it goes ahead of the queue (gate.ts).
      { timeoutS, urgent: true },
    )
    return String(row?.n ?? 0)
  }
}

/** The watermark, re-read at most once per `ttlMs` and by one caller at a time. */
export function throttledWatermark(read: () => Promise<string>, ttlMs: number) {
  const reads = new SingleFlight<string>()
  let mark: { value: string; at: number } | undefined
  return {
    get(): Promise<string> {
      if (mark && Date.now() - mark.at < ttlMs) return Promise.resolve(mark.value)
      return reads.run('watermark', async () => {
        const value = await read()
        mark = { value, at: Date.now() }
        return value
      })
    },
    forget() {
      mark = undefined
    },
  }
}
