import type { QueryRunner } from '../../clickhouse/run.ts'
import { SingleFlight } from '../../single-flight.ts'

/**
 * The data watermark: a cheap value that changes with every insert into events. It is `count()`
 * of `events`, answered from part metadata, so it costs one small query however large the table.
 * An insert anywhere changes it, which retires every cached body and every ETag handed out.
 * Ingestion only inserts (principle 2), so a changed count is what "the data changed" means; an
 * `ALTER UPDATE` of events would not be seen until the entries expire.
 *
 * Charts and filters also read `groups` (group.*), where a write replaces a row: its row count and
 * the sum of its versions (a write's time) change with every write, merges of replaced rows too,
 * and return to an earlier pair only when the rows are as they were. The table is small.
 */
export function eventsWatermark(runner: QueryRunner, timeoutS = 10): () => Promise<string> {
  return async () => {
    const [row] = await runner.rows<{ n: number | string; groups: string }>(
      {
        name: 'cache_watermark',
        sql: 'SELECT (SELECT count() FROM events) AS n, (SELECT toString((count(), sum(version))) FROM groups) AS groups',
        params: {},
      },
      // Every cacheable request waits for this read: it goes ahead of the queue (gate.ts).
      { timeoutS, urgent: true },
    )
    return `${row?.n ?? 0}/${row?.groups ?? ''}`
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
    /** The last value read, however old: what a key had when it was last known. */
    known(): string | undefined {
      return mark?.value
    },
    forget() {
      mark = undefined
    },
  }
}
