import { DateTime } from 'luxon'
import type { Logger } from 'pino'
import type { QueryRunner, Statement } from '../../clickhouse/run.ts'
import type { Config } from '../../config.ts'
import type { Metrics } from '../../telemetry/metrics.ts'
import { newestClosing, readSealedLatest, sealedLatestStatement, type SealedBuild, type SealedLatestRow } from '../../query/sealed.ts'
import { sealedCrossingStatement, sealedLiveEventsWriteStatement, sealedLiveWriteStatement } from '../../query/sealed-live.ts'
import { sealedLiveSeenWriteStatement } from '../../query/sealed-breakdown-visitors.ts'
import type { PostingsChoice } from '../../query/sealed-postings.ts'
import { sealedLivePagesWriteStatement } from '../../query/sealed-pages.ts'
import { sealedLiveProfilesWriteStatement } from '../../query/product/sealed-product.ts'
import { sealedLiveHeldWriteStatement } from '../../query/product/sealed-units.ts'
import { BuildPlanner, DEFAULT_INSERTS_TTL_MS, LATEST_TTL_MS, type SnapshotWait } from '../build-planner.ts'
import type { RequestRun } from '../planning-reads.ts'
import { BuildSnapshots } from '../build-snapshots.ts'
import { BuildScheduler } from '../build-scheduler.ts'
import { dropBuildsBefore, sealProject } from './builder.ts'
import { PostingsSizes } from './postings.ts'

/**
 * The parts of what requests add after C, each snapshot written when a route first reads it: the
 * live sessions (metrics, breakdowns), the numbered events after C (metrics' revenue, charts), what
 * /pages adds, the numbered profiles the product routes add, what funnels by person need of the
 * people the events after C hold, and the live visitors' last sealed day per value (breakdowns).
 */
const LIVE_SNAPSHOTS = {
  sessions: sealedLiveWriteStatement,
  events: sealedLiveEventsWriteStatement,
  pages: sealedLivePagesWriteStatement,
  profiles: sealedLiveProfilesWriteStatement,
  held: sealedLiveHeldWriteStatement,
  seen: sealedLiveSeenWriteStatement,
} as const
export type LivePart = keyof typeof LIVE_SNAPSHOTS
/** Where a build for a request holds each part's stamp. */
const STAMPS = { sessions: 'liveStamp', events: 'eventsStamp', pages: 'pagesStamp', profiles: 'liveStamp', held: 'heldStamp', seen: 'seenStamp' } as const satisfies Record<LivePart, keyof SealedBuild>

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
  /** Write what requests add after C (live sessions, /pages' part, numbered profiles) once per state of the events after C (default); or each request computes it. */
  liveSnapshots?: boolean
  /**
   * How long after a snapshot write began a request that finds it running (for the same inserts)
   * waits for it before computing its part itself (0: none waits). A wait holds no gate slot and
   * spends no queue budget (QueryStats.waited). Default 5 s: on L a request computing /pages' part
   * held chDB's one line 0.3–2.3 s, and the write beside it took 1.6–2.4 s (7 s while four requests
   * computed beside it at load 10).
   */
  snapshotWaitMs?: number
  /**
   * The request that starts a snapshot write waits for it as well (up to `snapshotWaitMs`) when the
   * part's previous write for the project took this long or more; below, it computes its part
   * (default 500 ms: M's starters answer sooner computing; L's /pages starter computing held every
   * other request on chDB's one line for ~500 ms; BuildPlanner.snapshot).
   */
  snapshotLongWriteMs?: number
  /**
   * The sessions a build must have sealed in the SEEN_DAYS before C for breakdowns to count their
   * visitors by the last day (and write the `seen` snapshot they need); a smaller project's unions of
   * bitmaps are cheaper (sql/schema/052_sealed_builds_recent.sql). Either way the count is exact.
   */
  countedMinSessions?: number
  /** How long an insert count read for a build answers the next requests (0: each request reads it). */
  insertsTtlMs?: number
  /**
   * How far behind the inserts a request may read the events after C (default 0: never). Under a
   * stream of inserts each one is a new state, its parts' snapshots written at most every 2 s, and
   * a request that finds none for the state computes its part (M, an insert a second: /pages 26 ->
   * 148 ms at p50, country 19 -> 50; experiments/under-ingest.ts). Within this lag it reads instead
   * the snapshots of an earlier state that a read of the insert count last found current at most
   * this long ago: the exact answer for the data as it was then, which the response says in
   * X-Quarry-Live-As-Of.
   */
  liveLagMs?: number
  /**
   * How long a build replaced by a newer one is kept for the requests that planned with it (default:
   * the time a request trusts the newest build it read, plus a request's query timeout, plus 5 s).
   * Until then a project holds two builds on disk; after it, one.
   */
  replacedGraceMs?: number
  /** Where the lag behind C and the build durations are reported. */
  metrics?: Metrics
}

const DEFAULT_BUILD_TIMEOUT_S = 900
const DEFAULT_REBUILD_INTERVAL_MS = 5 * 60_000
const DEFAULT_COUNTED_MIN_SESSIONS = 400_000
const DEFAULT_SNAPSHOT_WAIT_MS = 5_000
const DEFAULT_SNAPSHOT_LONG_WRITE_MS = 500
/** A request that may read an earlier state's snapshots neither waits for a write nor computes its part. */
const NO_WAIT: SnapshotWait = { ms: 0, longWriteMs: Infinity }

/** The sealed history `quarry serve` runs with, or none when QUARRY_SEALED=0. */
export function configuredSealedHistory(
  config: Pick<Config, 'QUARRY_SEALED' | 'QUARRY_QUERY_TIMEOUT_S' | 'QUARRY_LIVE_LAG_MS'>,
  deps: Pick<SealedHistoryOptions, 'runner' | 'logger' | 'metrics'> & { now?: () => Date },
): SealedHistory | undefined {
  if (!config.QUARRY_SEALED) return undefined
  return new SealedHistory({ now: () => new Date(), ...deps, queryTimeoutS: config.QUARRY_QUERY_TIMEOUT_S, liveLagMs: config.QUARRY_LIVE_LAG_MS })
}

export class SealedHistory {
  private readonly planner: BuildPlanner<SealedBuild, SealedLatestRow, LivePart>
  private readonly opts: Required<Omit<SealedHistoryOptions, 'metrics'>> & Pick<SealedHistoryOptions, 'metrics'>
  private readonly builds: BuildScheduler
  private readonly ofBuilds: BuildSnapshots
  /** Per project, the C of the newest build seen: read by a request or just built. */
  private readonly sealedUntil = new Map<string, Date>()
  private readonly postings = new PostingsSizes()
  /** How requests wait for snapshot writes (the two options, as the planner takes them). */
  private readonly snapshotWait: SnapshotWait
  /** The drops of replaced builds waiting out their grace. */
  private readonly drops = new Set<NodeJS.Timeout>()

  constructor(opts: SealedHistoryOptions) {
    this.opts = {
      buildTimeoutS: DEFAULT_BUILD_TIMEOUT_S,
      rebuildIntervalMs: DEFAULT_REBUILD_INTERVAL_MS,
      liveSnapshots: true,
      snapshotWaitMs: DEFAULT_SNAPSHOT_WAIT_MS,
      snapshotLongWriteMs: DEFAULT_SNAPSHOT_LONG_WRITE_MS,
      countedMinSessions: DEFAULT_COUNTED_MIN_SESSIONS,
      insertsTtlMs: DEFAULT_INSERTS_TTL_MS,
      liveLagMs: 0,
      replacedGraceMs: LATEST_TTL_MS + opts.queryTimeoutS * 1000 + 5_000,
      ...opts,
    }
    this.snapshotWait = { ms: this.opts.snapshotWaitMs, longWriteMs: this.opts.snapshotLongWriteMs }
    this.planner = new BuildPlanner(
      {
        latest: sealedLatestStatement,
        read: readSealedLatest,
        crossing: sealedCrossingStatement,
        ...(this.opts.liveSnapshots ? { snapshots: LIVE_SNAPSHOTS } : {}),
      },
      this.opts.insertsTtlMs,
      (err, project, part) => opts.logger.warn({ project, part, err }, 'sealed history: a snapshot of the events after C was not written'),
    )
    this.ofBuilds = new BuildSnapshots(this.opts.queryTimeoutS, (err, project, key) =>
      opts.logger.warn({ project, key, err }, 'sealed history: a snapshot of a build was not written'),
    )
    this.builds = new BuildScheduler({ logger: opts.logger, what: 'sealed history', rebuildIntervalMs: this.opts.rebuildIntervalMs, ended: (id) => this.planner.forget(id) })
    opts.metrics?.watch({ sealedUntil: () => this.sealedUntil })
  }

  /**
   * The build that answers a request for the project exactly, or undefined, with the stamps of the
   * snapshots of the parts after C the request reads: the events' as `eventsStamp`, /pages' as
   * `pagesStamp`, funnels by person's as `heldStamp`, another's as `liveStamp`. Its planning reads run on the request's runner. Schedules a build when the project
   * has none, the data changed under it, or it is behind, unless the request only explains itself.
   */
  async forRequest(projectId: string, run: Omit<RequestRun, 'timeoutS'>, ...parts: LivePart[]): Promise<SealedBuild | undefined> {
    const planning = { ...run, timeoutS: this.opts.queryTimeoutS }
    const schedule = run.runner.dryRun ? () => {} : () => this.schedule(projectId)
    const build = await this.planner.newest(projectId, planning)
    if (build && !run.runner.dryRun) this.sealedUntil.set(projectId, build.closedAt.toJSDate())
    if (!build || this.behind(projectId, build)) schedule()
    if (!build) return undefined
    if (await this.planner.holds(projectId, build, planning)) {
      if (build.recentSessions < this.opts.countedMinSessions) parts = parts.filter((part) => part !== 'seen')
      const lag = this.opts.liveLagMs > 0 ? this.planner.lagging(projectId, build, parts, this.opts.liveLagMs) : undefined
      const current = await Promise.all(parts.map((part) => this.planner.snapshot(projectId, build, planning, part, lag ? NO_WAIT : this.snapshotWait)))
      // Every part from one state: an earlier one whole rather than the current one in part.
      const lagging = lag && current.some((stamp) => stamp === undefined)
      const stamps = lagging ? parts.map((part) => lag.stamps.get(part)) : current
      if (parts.length > 0 && !run.runner.dryRun) this.opts.metrics?.sealedLiveReads.inc({ read: lagging ? 'earlier' : stamps.every((s) => s !== undefined) ? 'current' : 'computed' })
      const stamped: SealedBuild = lagging ? { ...build, liveAsOf: DateTime.fromMillis(lag.asOf, { zone: 'utc' }) } : { ...build }
      parts.forEach((part, i) => {
        if (stamps[i] !== undefined) stamped[STAMPS[part]] = stamps[i]
      })
      return stamped
    }
    if (!run.runner.dryRun) this.planner.forget(projectId)
    schedule()
    return undefined
  }

  /** `render`'s statement for the project's build, once the sizes of the postings sets it tests are known (postings.ts). */
  statement(projectId: string, build: SealedBuild, run: Omit<RequestRun, 'timeoutS'>, render: (postings: PostingsChoice) => Statement): Promise<Statement> {
    return this.postings.statement(projectId, build, { ...run, timeoutS: this.opts.queryTimeoutS }, render)
  }

  private closing(): DateTime {
    return newestClosing(DateTime.fromJSDate(this.opts.now()))
  }

  private behind(projectId: string, build: SealedBuild): boolean {
    return +this.closing() - +build.closedAt >= this.builds.moveAfterMs(projectId)
  }

  /**
   * The stamp of a snapshot of what the build alone gives (active users' series), written once per
   * build and key when a request first asks (src/services/build-snapshots.ts); undefined until then.
   */
  ofBuild(projectId: string, build: SealedBuild, runner: QueryRunner, key: string, write: (stamp: number) => Statement): number | undefined {
    return this.ofBuilds.stamp(projectId, build.version, key, runner, write)
  }

  /** Resolves when the snapshots being written for the project are. */
  async snapshotsWritten(projectId: string): Promise<void> {
    await Promise.all([this.planner.written(projectId), this.ofBuilds.written(projectId)])
  }

  /** Resolves when the project's build in progress, if any, is done. */
  settled(projectId: string): Promise<void> {
    return this.builds.settled(projectId)
  }

  /** Seals the project's history now, one build per project at a time. */
  build(projectId: string): Promise<void> {
    return this.builds.run(projectId, this.buildOf(projectId))
  }

  /**
   * No build starts after this, and the running one ends with its statement, as do the snapshot
   * writes under way; requests still plan with the builds there are.
   */
  async stop(): Promise<void> {
    // A replaced build not yet dropped is dropped by the project's next build.
    for (const timer of this.drops) clearTimeout(timer)
    this.drops.clear()
    await Promise.all([this.builds.stop(), this.planner.written(), this.ofBuilds.written()])
  }

  private schedule(projectId: string): void {
    this.builds.schedule(projectId, this.buildOf(projectId))
  }

  private buildOf(projectId: string) {
    const durations = this.opts.metrics?.sealedBuildDuration
    return async () => {
      const closedAt = this.closing()
      const built = await sealProject(projectId, { runner: this.builds.guard(this.opts.runner), logger: this.opts.logger, closedAt, timeoutS: this.opts.buildTimeoutS })
      if (built) {
        durations?.observe({ project: projectId }, built.ms / 1000)
        this.sealedUntil.set(projectId, closedAt.toJSDate())
        this.dropReplacedLater(projectId, built.version)
      }
      return built?.ms
    }
  }

  /** Drops the builds before `version` once no request can still be reading them. */
  private dropReplacedLater(projectId: string, version: number): void {
    const timer = setTimeout(() => {
      this.drops.delete(timer)
      dropBuildsBefore(this.builds.guard(this.opts.runner), projectId, version, this.opts.buildTimeoutS).catch((err: unknown) =>
        this.opts.logger.warn({ project: projectId, err }, 'sealed history: a replaced build was not dropped; the next build drops it'),
      )
    }, this.opts.replacedGraceMs)
    timer.unref()
    this.drops.add(timer)
  }
}
