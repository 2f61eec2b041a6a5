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
import { BuildPlanner, type RequestRun } from '../build-planner.ts'
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
}

interface Project {
  id: string
  timezone: string
}

/** The rollup is behind once the newest C is this far ahead, or 30 builds' time if that is longer. */
const MOVE_AFTER_MS = 3_600_000
const MOVE_AFTER_BUILDS = 30
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
  private readonly planner = new BuildPlanner<PageRollup, PageRollupLatestRow>({
    latest: latestRollupStatement,
    read: readLatestRollup,
    crossing: rollupCrossingStatement,
  })
  private readonly building = new Map<string, Promise<void>>()
  private readonly lastScheduled = new Map<string, number>()
  /** Per project, how long its last kept build took. */
  private readonly buildMs = new Map<string, number>()
  private stopped = false

  private readonly opts: Required<PageRollupsOptions>

  constructor(opts: PageRollupsOptions) {
    this.opts = { buildTimeoutS: DEFAULT_BUILD_TIMEOUT_S, rebuildIntervalMs: DEFAULT_REBUILD_INTERVAL_MS, ...opts }
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
    const moveAfter = Math.max(MOVE_AFTER_MS, MOVE_AFTER_BUILDS * (this.buildMs.get(project.id) ?? 0))
    return +newest - +rollup.closedAt >= moveAfter
  }

  /** Resolves when the project's build in progress, if any, is done. */
  async settled(projectId: string): Promise<void> {
    await this.building.get(projectId)?.catch(() => {})
  }

  /** Builds the project's rollup now, one build per project at a time. */
  build(project: Project): Promise<void> {
    const running = this.building.get(project.id)
    if (running) return running
    const build = buildRollup(project, { runner: this.opts.runner, logger: this.opts.logger, now: this.opts.now, timeoutS: this.opts.buildTimeoutS })
      .then((ms) => {
        if (ms !== undefined) this.buildMs.set(project.id, ms)
      })
      .finally(() => {
        this.building.delete(project.id)
        this.planner.forget(project.id)
      })
    this.building.set(project.id, build)
    return build
  }

  /** No build starts after this; requests still plan with the rollups there are. */
  stop(): void {
    this.stopped = true
  }

  private schedule(project: Project): void {
    const last = this.lastScheduled.get(project.id) ?? -Infinity
    if (this.stopped || this.building.has(project.id) || Date.now() - last < this.opts.rebuildIntervalMs) return
    this.lastScheduled.set(project.id, Date.now())
    this.build(project).catch((err: unknown) => this.opts.logger.warn({ err, project: project.id }, 'page rollup build failed'))
  }
}
