import { DateTime } from 'luxon'
import type { Logger } from 'pino'
import type { QueryRunner } from '../../clickhouse/run.ts'
import type { Config } from '../../config.ts'
import { newestClosing } from '../../query/page-rollup.ts'
import { readSealedLatest, sealedCrossingStatement, sealedLatestStatement, type SealedBuild, type SealedLatestRow } from '../../query/sealed.ts'
import { BuildPlanner, type RequestRun } from '../build-planner.ts'
import { sealProject } from './builder.ts'

/**
 * The sealed history as a background service (sql/schema/012_sealed.sql for what it holds).
 *
 * A build answers a request when the data under it is as it was built: no insert since reached
 * before its C, and no event after C continues a session it sealed whole. Otherwise the request is
 * answered from `sessions`, as without the sealed tier, and a new build is scheduled.
 *
 * C is the start of a UTC hour at least an hour old, and moves forward by a new build once the
 * newest is an hour behind, or 30 times its last build's duration if that is longer. A build runs
 * in the background when a request finds the history missing, changed or behind, at most once per
 * `rebuildIntervalMs` per project. A request that only explains itself never starts one.
 */
export interface SealedHistoryOptions {
  /** The service's own runner, for builds; requests plan with theirs. */
  runner: QueryRunner
  logger: Logger
  /** The clock that decides which hours are closed. */
  now: () => Date
  /** max_execution_time of the statements a request runs to plan. */
  queryTimeoutS: number
  /** max_execution_time of each build statement. */
  buildTimeoutS?: number
  /** Least time between two builds that requests start for one project. */
  rebuildIntervalMs?: number
}

const MOVE_AFTER_MS = 3_600_000
const MOVE_AFTER_BUILDS = 30
const DEFAULT_BUILD_TIMEOUT_S = 900
const DEFAULT_REBUILD_INTERVAL_MS = 5 * 60_000

/** The sealed history `quarry serve` runs with, or none when QUARRY_SEALED=0. */
export function configuredSealedHistory(
  config: Pick<Config, 'QUARRY_SEALED' | 'QUARRY_QUERY_TIMEOUT_S'>,
  deps: Pick<SealedHistoryOptions, 'runner' | 'logger'> & { now?: () => Date },
): SealedHistory | undefined {
  if (!config.QUARRY_SEALED) return undefined
  return new SealedHistory({ now: () => new Date(), ...deps, queryTimeoutS: config.QUARRY_QUERY_TIMEOUT_S })
}

export class SealedHistory {
  private readonly planner = new BuildPlanner<SealedBuild, SealedLatestRow>({
    latest: sealedLatestStatement,
    read: readSealedLatest,
    crossing: sealedCrossingStatement,
  })
  private readonly building = new Map<string, Promise<void>>()
  private readonly lastScheduled = new Map<string, number>()
  private readonly buildMs = new Map<string, number>()
  private stopped = false
  private readonly opts: Required<SealedHistoryOptions>

  constructor(opts: SealedHistoryOptions) {
    this.opts = { buildTimeoutS: DEFAULT_BUILD_TIMEOUT_S, rebuildIntervalMs: DEFAULT_REBUILD_INTERVAL_MS, ...opts }
  }

  /**
   * The build that answers a request for the project exactly, or undefined. Its planning reads run
   * on the request's runner. Schedules a build when the project has none, the data changed under
   * it, or it is behind, unless the request only explains itself.
   */
  async forRequest(projectId: string, run: Omit<RequestRun, 'timeoutS'>): Promise<SealedBuild | undefined> {
    const planning = { ...run, timeoutS: this.opts.queryTimeoutS }
    const schedule = run.runner.dryRun ? () => {} : () => this.schedule(projectId)
    const build = await this.planner.newest(projectId, planning)
    if (!build || this.behind(projectId, build)) schedule()
    if (!build) return undefined
    if (await this.planner.holds(projectId, build, planning)) return build
    if (!run.runner.dryRun) this.planner.forget(projectId)
    schedule()
    return undefined
  }

  private closing(): DateTime {
    return newestClosing(DateTime.fromJSDate(this.opts.now()), 'UTC')
  }

  private behind(projectId: string, build: SealedBuild): boolean {
    const moveAfter = Math.max(MOVE_AFTER_MS, MOVE_AFTER_BUILDS * (this.buildMs.get(projectId) ?? 0))
    return +this.closing() - +build.closedAt >= moveAfter
  }

  /** Resolves when the project's build in progress, if any, is done. */
  async settled(projectId: string): Promise<void> {
    await this.building.get(projectId)?.catch(() => {})
  }

  /** Seals the project's history now, one build per project at a time. */
  build(projectId: string): Promise<void> {
    const running = this.building.get(projectId)
    if (running) return running
    const build = sealProject(projectId, { runner: this.opts.runner, logger: this.opts.logger, closedAt: this.closing(), timeoutS: this.opts.buildTimeoutS })
      .then((ms) => {
        if (ms !== undefined) this.buildMs.set(projectId, ms)
      })
      .finally(() => {
        this.building.delete(projectId)
        this.planner.forget(projectId)
      })
    this.building.set(projectId, build)
    return build
  }

  /** No build starts after this; requests still plan with the builds there are. */
  stop(): void {
    this.stopped = true
  }

  private schedule(projectId: string): void {
    const last = this.lastScheduled.get(projectId) ?? -Infinity
    if (this.stopped || this.building.has(projectId) || Date.now() - last < this.opts.rebuildIntervalMs) return
    this.lastScheduled.set(projectId, Date.now())
    this.build(projectId).catch((err: unknown) => this.opts.logger.warn({ err, project: projectId }, 'sealed history build failed'))
  }
}
