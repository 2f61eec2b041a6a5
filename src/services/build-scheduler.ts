import { AsyncLocalStorage } from 'node:async_hooks'
import type { Logger } from 'pino'
import type { QueryRunner } from '../clickhouse/run.ts'

export interface BuildSchedulerOptions {
  logger: Logger
  /** What the builds make, for the log line of a failed one. */
  what: string
  /** Least time between two builds that requests start for one project. */
  rebuildIntervalMs: number
  /** Called once a project's build has ended, kept or not. */
  ended: (projectId: string) => void
}

/** A build is behind once its C is this far behind the newest, or 30 builds' time if that is longer. */
const MOVE_AFTER_MS = 3_600_000
const MOVE_AFTER_BUILDS = 30

/**
 * The background builds of the sealed history: one per project at a time, requests start at most
 * one per `rebuildIntervalMs` per project, none once stopped. A build resolves to how long it took,
 * or undefined when it was not kept.
 */
export class BuildScheduler {
  private readonly building = new Map<string, Promise<void>>()
  private readonly lastScheduled = new Map<string, number>()
  /** Per project, how long its last kept build took. */
  private readonly buildMs = new Map<string, number>()
  private stopped = false
  /** Aborted on stop: a build's statement running in a background lane is stopped where it runs. */
  private readonly stopping = new AbortController()
  /**
   * The context the scheduler was made in, outside any request: a build runs there, so neither its
   * log lines nor its spans are taken for those of the request that happened to start it.
   */
  private readonly detached = AsyncLocalStorage.snapshot()

  constructor(private readonly o: BuildSchedulerOptions) {}

  /** How far behind the newest C a project's build may fall before a new one is due. */
  moveAfterMs(projectId: string): number {
    return Math.max(MOVE_AFTER_MS, MOVE_AFTER_BUILDS * (this.buildMs.get(projectId) ?? 0))
  }

  /** Runs the project's build now, or joins the one in progress. */
  run(projectId: string, build: () => Promise<number | undefined>): Promise<void> {
    const running = this.building.get(projectId)
    if (running) return running
    const started = this.detached(build)
      .then((ms) => {
        if (ms !== undefined) this.buildMs.set(projectId, ms)
      })
      .finally(() => {
        this.building.delete(projectId)
        this.o.ended(projectId)
      })
    this.building.set(projectId, started)
    return started
  }

  /** Starts a build in the background unless one runs, one started lately, or the scheduler stopped. */
  schedule(projectId: string, build: () => Promise<number | undefined>): void {
    const last = this.lastScheduled.get(projectId) ?? -Infinity
    if (this.stopped || this.building.has(projectId) || Date.now() - last < this.o.rebuildIntervalMs) return
    this.lastScheduled.set(projectId, Date.now())
    this.run(projectId, build).catch((err: unknown) => {
      if (this.stopped) this.o.logger.info({ project: projectId }, `${this.o.what} build stopped: the service is stopping`)
      else this.o.logger.warn({ err, project: projectId }, `${this.o.what} build failed`)
    })
  }

  /** Resolves when the project's build in progress, if any, is done. */
  async settled(projectId: string): Promise<void> {
    await this.building.get(projectId)?.catch(() => {})
  }

  /**
   * The runner a build runs on: once the scheduler has stopped, a build's next statement fails at
   * once, and the one it is in is stopped (what it wrote is not registered, and the next build drops
   * it). A build step in the lowest-priority lane ran 20-55 times its time beside busy processes: one
   * left to finish held a shutdown for 3-12 s.
   */
  guard(runner: QueryRunner): QueryRunner {
    const signal = this.stopping.signal
    const open = () => {
      if (this.stopped) throw new Error(`${this.o.what}: the service is stopping`)
    }
    return {
      ...runner,
      rows: async (stmt, opts) => (open(), runner.rows(stmt, { ...opts, signal: opts.signal ? AbortSignal.any([opts.signal, signal]) : signal })),
      stream: (stmt, format, opts) => (open(), runner.stream(stmt, format, opts)),
      command: async (stmt, opts) => (open(), runner.command(stmt, { ...opts, signal })),
    }
  }

  /**
   * No build starts after this; resolves once the running ones have ended. The engine must not be
   * closed under a build: chDB closed while a statement runs aborts the process (a libc++ bounds
   * assertion, SIGSEGV), which cut shutdowns that came while a first request's builds ran.
   */
  async stop(): Promise<void> {
    this.stopped = true
    this.stopping.abort()
    await Promise.allSettled(this.building.values())
  }
}
