import { DateTime } from 'luxon'
import type { QueryRunner, QueryStats } from '../../clickhouse/run.ts'
import {
  latestRollupStatement,
  readLatestRollup,
  rollupCrossingStatement,
  rollupInsertsStatement,
  type PageRollup,
  type PageRollupLatestRow,
} from '../../query/page-rollup.ts'

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

/** event_inserts keeps 30 days; an older rollup would count inserts it can no longer see. */
const MAX_AGE_DAYS = 25
/** How long the newest build read from page_rollups is trusted before it is read again. */
const LATEST_TTL_MS = 5_000

interface Latest {
  read: number
  rollup: PageRollup | undefined
  builtAt?: DateTime
}

/**
 * What a request needs to know before reading a rollup: the project's newest build, and whether
 * the data under it is as it was built. Both are remembered per project, so most requests plan with
 * one small read. A dry run (explain=sql) lists the reads a request makes and decides as the
 * planner last saw the data, remembering nothing from it.
 */
export class RollupPlanner {
  private readonly latest = new Map<string, Latest>()
  /** Per project, the rollup and insert count at which no session crossed its C. */
  private readonly verified = new Map<string, { version: number; inserts: number }>()

  async newest(projectId: string, run: RequestRun): Promise<PageRollup | undefined> {
    const cached = this.latest.get(projectId)
    let entry = cached && Date.now() - cached.read < LATEST_TTL_MS ? cached : undefined
    if (!entry) {
      const [row] = await run.runner.rows<PageRollupLatestRow>(latestRollupStatement(projectId), opts(run))
      if (run.runner.dryRun) entry = cached
      else {
        const found = readLatestRollup(row)
        entry = { read: Date.now(), rollup: found?.rollup, builtAt: found?.builtAt }
        this.latest.set(projectId, entry)
      }
    }
    // Compared with the engine's clock at build time; both are wall clocks of the same era.
    return entry?.builtAt && entry.builtAt > DateTime.utc().minus({ days: MAX_AGE_DAYS }) ? entry.rollup : undefined
  }

  /**
   * Whether the data under the rollup is as it was built: no insert since reached before C, and no
   * event after C ties a session of the rollup to what came before. The second takes a pass over the
   * events after C, so it is taken again only when something was inserted since it last passed.
   */
  async holds(projectId: string, rollup: PageRollup, run: RequestRun): Promise<boolean> {
    const [count] = await run.runner.rows<{ inserts: number; closed_inserts: number }>(
      rollupInsertsStatement(projectId, rollup.closedAt, rollup.insertsSince),
      opts(run),
    )
    const verified = this.verified.get(projectId)
    if (run.runner.dryRun) return verified?.version === rollup.version
    if (count!.closed_inserts !== rollup.inserts) return false
    if (verified?.version === rollup.version && verified.inserts === count!.inserts) return true
    const [row] = await run.runner.rows<{ crossing: number }>(rollupCrossingStatement(projectId, rollup), opts(run))
    if (row!.crossing > 0) return false
    this.verified.set(projectId, { version: rollup.version, inserts: count!.inserts })
    return true
  }

  /** The project's newest build is to be read again (a build finished, or the data changed under it). */
  forget(projectId: string): void {
    this.latest.delete(projectId)
  }
}

const opts = (run: RequestRun) => ({ timeoutS: run.timeoutS, signal: run.signal, stats: run.stats })
