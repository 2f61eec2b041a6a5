import { DateTime } from 'luxon'
import type { Logger } from 'pino'
import type { QueryRunner } from '../../clickhouse/run.ts'
import type { Config } from '../../config.ts'
import type { PageRequest } from '../../query/insights.ts'
import {
  latestRollupStatement,
  newestClosing,
  readLatestRollup,
  rollupCovers,
  rollupCrossingStatement,
  rollupMayAnswer,
  type PageRollup,
  type PageRollupLatestRow,
} from '../../query/page-rollup.ts'
import { BuildPlanner, DEFAULT_INSERTS_TTL_MS, type RequestRun } from '../build-planner.ts'
import { BuildScheduler } from '../build-scheduler.ts'
import { buildRollup } from './builder.ts'

/**
 * The /pages rollups as a background service (see src/query/page-rollup.ts for what a rollup is).
 *
 * A rollup answers a request when the request has no filters, its timezone is the rollup's, its
 * window starts at a local midnight before C and ends after C, and the data under it is as it was
 * built. Otherwise insights_pages answers, as always.
 *
 * C moves forward by a new build once the rollup is behind by an hour, or by 30 times its last
 * build's duration if that is longer (a project whose build takes two minutes moves C once an
 * hour, one whose build takes ten minutes every five hours). A build runs in the background when a
 * request finds the rollup missing, changed or behind, at most once per `rebuildIntervalMs` per
 * project; until it is done, requests are answered from the rollup they had, or from insights_pages.
 * A request that only explains itself never starts one.
 */
export interface PageRollupsOptions {
  /** The service's own runner, for builds; requests plan with theirs. */
  runner: QueryRunner
  logger: Logger
  /** The clock the windows resolve against, which decides which days are closed. */
  now: () => Date
  /** max_execution_time of the statements a request runs to plan. */
  queryTimeoutS: number
  /** max_execution_time of each build statement. */
  buildTimeoutS?: number
  /** Least time between two builds that requests start for one project. */
  rebuildIntervalMs?: number
  /** How long an insert count read for a rollup answers the next requests (0: each request reads it). */
  insertsTtlMs?: number
}

interface Project {
  id: string
  timezone: string
}

/** The rollup is behind once the newest C is this far ahead, or 30 builds' time if that is longer. */
/** A build reads all of a project's events before C once: 44 s for the 15.1M events of the largest at 100M. */
const DEFAULT_BUILD_TIMEOUT_S = 900
const DEFAULT_REBUILD_INTERVAL_MS = 5 * 60_000

/** The rollups `quarry serve` runs with, or none when QUARRY_PAGE_ROLLUPS=0. */
export function configuredPageRollups(
  config: Pick<Config, 'QUARRY_PAGE_ROLLUPS' | 'QUARRY_QUERY_TIMEOUT_S'>,
  deps: Pick<PageRollupsOptions, 'runner' | 'logger'> & { now?: () => Date },
): PageRollups | undefined {
  if (!config.QUARRY_PAGE_ROLLUPS) return undefined
  return new PageRollups({ now: () => new Date(), ...deps, queryTimeoutS: config.QUARRY_QUERY_TIMEOUT_S })
}

export class PageRollups {
  private readonly planner: BuildPlanner<PageRollup, PageRollupLatestRow>
  private readonly opts: Required<PageRollupsOptions>
  private readonly builds: BuildScheduler

  constructor(opts: PageRollupsOptions) {
    this.opts = { buildTimeoutS: DEFAULT_BUILD_TIMEOUT_S, rebuildIntervalMs: DEFAULT_REBUILD_INTERVAL_MS, insertsTtlMs: DEFAULT_INSERTS_TTL_MS, ...opts }
    this.planner = new BuildPlanner(
      { latest: latestRollupStatement, read: readLatestRollup, crossing: rollupCrossingStatement },
      this.opts.insertsTtlMs,
    )
    this.builds = new BuildScheduler({ logger: opts.logger, what: 'page rollup', rebuildIntervalMs: this.opts.rebuildIntervalMs, ended: (id) => this.planner.forget(id) })
  }

  /**
   * The rollup that answers this /pages request exactly, or undefined. Its planning reads run on
   * the request's runner. Schedules a build when the project has none, the data changed under it,
   * or it is behind, unless the request only explains itself.
   */
  async forRequest(project: Project, req: PageRequest, run: Omit<RequestRun, 'timeoutS'>): Promise<PageRollup | undefined> {
    if (!rollupMayAnswer(req)) return undefined
    const planning = { ...run, timeoutS: this.opts.queryTimeoutS }
    const schedule = run.runner.dryRun ? () => {} : () => this.schedule(project)
    const rollup = await this.planner.newest(project.id, planning)
    if (!rollup || rollup.timezone !== project.timezone || this.behind(project, rollup)) schedule()
    if (!rollup || !rollupCovers(rollup, req)) return undefined
    if (await this.planner.holds(project.id, rollup, planning)) return rollup
    if (!run.runner.dryRun) this.planner.forget(project.id)
    schedule()
    return undefined
  }

  private behind(project: Project, rollup: PageRollup): boolean {
    const newest = newestClosing(DateTime.fromJSDate(this.opts.now()), project.timezone)
    return +newest - +rollup.closedAt >= this.builds.moveAfterMs(project.id)
  }

  /** Resolves when the project's build in progress, if any, is done. */
  settled(projectId: string): Promise<void> {
    return this.builds.settled(projectId)
  }

  /** Builds the project's rollup now, one build per project at a time. */
  build(project: Project): Promise<void> {
    return this.builds.run(project.id, this.buildOf(project))
  }

  /** No build starts after this, and the running one ends with its statement; requests still plan with the rollups there are. */
  stop(): Promise<void> {
    return this.builds.stop()
  }

  private schedule(project: Project): void {
    this.builds.schedule(project.id, this.buildOf(project))
  }

  private buildOf(project: Project) {
    return () => buildRollup(project, { runner: this.builds.guard(this.opts.runner), logger: this.opts.logger, now: this.opts.now, timeoutS: this.opts.buildTimeoutS })
  }
}
