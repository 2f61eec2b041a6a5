import type { QueryRunner, RunOptions } from '../clickhouse/run.ts'

interface Waiter<Row> {
  resolve: (row: Row) => void
  reject: (err: unknown) => void
}

interface Batch<Args, Row> {
  runner: QueryRunner
  own: RunOptions
  entries: Map<string, { args: Args; waiters: Waiter<Row>[] }>
}

/**
 * One statement for the reads many keys ask at once: the first read starts at once (after the
 * current tick); the keys asked while it runs are read together by the next, which starts as it
 * ends. chDB runs parameterized statements one at a time, process-wide: under 50 projects' requests,
 * their planning reads took ~190 turns on that line in 11 s (benchmarks/README.md, issue 19's
 * uncached phase). The batch runs on the runner and options of the first request that asks in it:
 * each other request has waited on shared work (QueryStats.waited).
 */
export class BatchedReads<Args, Row> {
  private next: Batch<Args, Row> | undefined
  private running = false

  constructor(private readonly read: (runner: QueryRunner, args: Args[], own: RunOptions) => Promise<Row[]>) {}

  load(key: string, args: Args, runner: QueryRunner, own: RunOptions): Promise<Row> {
    if (this.next && own.stats) own.stats.waited += 1
    const batch = (this.next ??= { runner, own, entries: new Map() })
    const entry = batch.entries.get(key) ?? { args, waiters: [] }
    batch.entries.set(key, entry)
    const row = new Promise<Row>((resolve, reject) => entry.waiters.push({ resolve, reject }))
    if (!this.running) {
      this.running = true
      queueMicrotask(() => void this.drain())
    }
    return row
  }

  /** Reads batch after batch while keys are asked; a failed statement fails each read in its batch. */
  private async drain(): Promise<void> {
    for (let batch = this.next; batch; batch = this.next) {
      this.next = undefined
      const entries = [...batch.entries.values()]
      try {
        const rows = await this.read(batch.runner, entries.map((e) => e.args), batch.own)
        entries.forEach((e, i) => e.waiters.forEach((w) => w.resolve(rows[i]!)))
      } catch (err) {
        for (const e of entries) for (const w of e.waiters) w.reject(err)
      }
    }
    this.running = false
  }
}
