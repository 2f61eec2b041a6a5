import { SingleFlight } from '../single-flight.ts'
import type { QueryRunner, QueryStats, RunOptions } from '../clickhouse/run.ts'
import { eventInsertsStatement, insertCounts, type InsertCount, type InsertCountRow, type InsertQuery } from '../query/event-inserts.ts'

/**
 * The request a planning read belongs to: it runs on the request's runner, so it counts in the
 * request's stats, stops with it, and is listed (not run) under explain=sql.
 */
export interface RequestRun {
  runner: QueryRunner
  timeoutS: number
  signal?: AbortSignal
  stats?: QueryStats
}

/**
 * One read for every request that needs the same fact at once: after an insert, a burst of 20 read
 * the newest build 20 times, the insert count 19 and the crossing 5, one after another on chDB's
 * one line. The read runs detached from the request that starts it (its own deadline, no signal),
 * so that request's cancellation does not fail the others; its time counts in that request's stats.
 */
export class SharedReads {
  private readonly flights = new SingleFlight<unknown>()

  /** A request that joins a read under way has waited on shared work (QueryStats.waited). */
  run<T>(key: string, run: RequestRun, read: (own: RunOptions) => Promise<T>): Promise<T> {
    let started = false
    const shared = this.flights.run(key, () => {
      started = true
      return read({ timeoutS: run.timeoutS, stats: run.stats })
    }) as Promise<T>
    if (!started && run.stats) run.stats.waited += 1
    return shared
  }
}

/** Each entry's insert count, in one statement. */
export const readInsertCounts = async (runner: QueryRunner, entries: InsertQuery[], own: RunOptions): Promise<InsertCount[]> =>
  insertCounts(entries, await runner.rows<InsertCountRow>(eventInsertsStatement(entries), own))

/** A request's own options for a read it runs itself. */
export const requestOptions = (run: RequestRun) => ({ timeoutS: run.timeoutS, signal: run.signal, stats: run.stats })
