import { randomInt } from 'node:crypto'
import { DateTime } from 'luxon'
import type { QueryRunner, RunOptions, Statement } from '../clickhouse/run.ts'
import { clickhouseInstant } from '../query/time-range.ts'
import type { InsertCount, InsertQuery, VersionedBuild } from '../query/event-inserts.ts'
import { BatchedReads } from './batched-reads.ts'
import { readInsertCounts, requestOptions, SharedReads, type RequestRun } from './planning-reads.ts'

/** The statements that find a kind of build and tell whether it still holds. */
export interface BuildKind<B extends VersionedBuild, Row extends { project_id: string }, Part extends string = string> {
  /** The projects' newest builds: a row for each that has one, with its `project_id`. */
  latest(projectIds: readonly string[]): Statement
  read(row: Row | undefined): { build: B; builtAt: DateTime } | undefined
  /**
   * One row with a column `crossing`: how many of the build's sessions events after C continue,
   * reading the events from `from` on (C, or later when the events before it were checked).
   */
  crossing(projectId: string, build: B, from: string): Statement
  /**
   * Per part of what requests add after C, the statement that writes it under a stamp, for them to
   * read until the next insert. Each part is written when a request first needs it, so a request
   * pays only for what its route reads.
   */
  snapshots?: Readonly<Record<Part, (projectId: string, build: B, stamp: number) => Statement>>
}

/** event_inserts keeps 30 days; an older build would count inserts it can no longer see. */
const MAX_AGE_DAYS = 25
/** How long the newest build read is trusted before it is read again. */
export const LATEST_TTL_MS = 5_000
/** Least time between two snapshots of one part of a project: under a stream of inserts, requests in between compute theirs. */
const SNAPSHOT_INTERVAL_MS = 2_000
/** A snapshot is written again once this old, well before its rows expire (sealed_live keeps them an hour). */
const SNAPSHOT_MAX_AGE_MS = 10 * 60_000
/** How long one is still read while its next is written (or that write keeps failing). */
const SNAPSHOT_READ_MAX_AGE_MS = 30 * 60_000
/**
 * How long an insert count is trusted by default: the response cache reads its data watermark as
 * often, so an insert reaches an answer within a second either way, and a request spares a read.
 */
export const DEFAULT_INSERTS_TTL_MS = 1_000

/** A snapshot's write: in the background lane, beside the requests, bounded by `timeoutS` (a JavaScript abort does not stop chDB). */
export const writeInLane = (runner: QueryRunner, write: Statement, timeoutS: number): Promise<void> =>
  runner.command({ ...write, sql: `${write.sql}\nSETTINGS max_execution_time = ${timeoutS}` }, { background: 'snapshot' })

/** A part's last snapshot write: when it began (or ended), and while it runs, the write and the insert count it is for. */
interface Written {
  at: number
  writing?: Promise<void>
  inserts?: number
  /** Once ended, how long it took. */
  tookMs?: number
}

/** How requests wait for a part's snapshot write instead of computing the part themselves. */
export interface SnapshotWait {
  /** How long after a write began a request may wait for it (0: none waits). */
  ms: number
  /** The request that starts a write waits for it too when the part's previous write took this long. */
  longWriteMs: number
}

/**
 * A state of the data under a build that passed `holds`: its insert count, the last time a read
 * still found that count (`asOf`: the state holds every insert committed before it), and the
 * snapshot of each part written at it.
 */
interface State<Part> {
  version: number
  inserts: number
  lastLogged: string
  asOf: number
  stamps: Map<Part, { id: number; at: number }>
}

/** How many states before the current one keep their snapshots for requests that may lag. */
const EARLIER_STATES = 3

interface Latest<B> {
  read: number
  build: B | undefined
  builtAt?: DateTime
}

/**
 * What a request needs to know before reading a build over the events before C (the sealed
 * history): the project's newest build, and whether the data under it is as it was
 * built. Both are remembered per project, so most requests plan with one small read. A dry run
 * (explain=sql) lists the reads a request makes and decides as the planner last saw the data,
 * remembering nothing from it.
 */
export class BuildPlanner<B extends VersionedBuild, Row extends { project_id: string }, Part extends string = string> {
  private readonly latest = new Map<string, Latest<B>>()
  /**
   * Per project, the build and insert count at which no session crossed its C, the newest insert
   * counted then, and the snapshot of each part written at that count.
   */
  private readonly verified = new Map<string, State<Part>>()
  /** Per project, the states verified before the current one that had snapshots written, newest first. */
  private readonly earlier = new Map<string, State<Part>[]>()
  /** Per project and part, the last snapshot write: when it ended, or the one in progress. */
  private readonly snapshots = new Map<string, Map<Part, Written>>()
  /** The planning reads under way, which concurrent requests share (never under a dry run). */
  private readonly shared = new SharedReads()
  /** Per project, the last insert count read for a build, and when, after which verified insert. */
  private readonly counts = new Map<string, { at: number; version: number; after?: string; count: InsertCount }>()
  /** The insert counts due at once, every project's in one statement. */
  private readonly insertReads = new BatchedReads<InsertQuery, InsertCount>(readInsertCounts)
  /** The newest builds due at once, likewise. */
  private readonly latestReads = new BatchedReads<string, Row | undefined>(async (runner, projectIds, own) => {
    const rows = await runner.rows<Row>(this.kind.latest(projectIds), own)
    return projectIds.map((id) => rows.find((row) => row.project_id === id))
  })

  /** `insertsTtlMs`: how long an insert count read for a build answers the next requests (0: every request reads it). */
  constructor(
    private readonly kind: BuildKind<B, Row, Part>,
    private readonly insertsTtlMs = DEFAULT_INSERTS_TTL_MS,
    /** Told of a snapshot write that failed (requests compute that part until one is written). */
    private readonly failed: (err: unknown, projectId: string, part: Part) => void = () => {},
  ) {}

  async newest(projectId: string, run: RequestRun): Promise<B | undefined> {
    const cached = this.latest.get(projectId)
    let entry = cached && Date.now() - cached.read < LATEST_TTL_MS ? cached : undefined
    if (!entry && run.runner.dryRun) {
      await run.runner.rows<Row>(this.kind.latest([projectId]), requestOptions(run))
      entry = cached
    } else if (!entry) {
      entry = await this.shared.run(`latest:${projectId}`, run, async (own) => {
        const row = await this.latestReads.load(projectId, projectId, run.runner, own)
        const found = this.kind.read(row)
        const read = { read: Date.now(), build: found?.build, builtAt: found?.builtAt }
        this.latest.set(projectId, read)
        return read
      })
    }
    // Compared with the engine's clock at build time; both are wall clocks of the same era.
    return entry?.builtAt && entry.builtAt > DateTime.utc().minus({ days: MAX_AGE_DAYS }) ? entry.build : undefined
  }

  /**
   * Whether the data under the build is as it was built: no insert since reached before C, and no
   * event after C ties a session of the build to what came before. The second takes a pass over the
   * events after C, so it is taken again only when something was inserted since it last passed.
   */
  async holds(projectId: string, build: B, run: RequestRun): Promise<boolean> {
    const known = this.verified.get(projectId)
    const verified = known?.version === build.version ? known : undefined
    const count = await this.insertCount(projectId, build, run, verified?.lastLogged)
    if (run.runner.dryRun) return verified !== undefined
    if (count.closed_inserts !== build.inserts) return false
    if (verified?.inserts === count.inserts) {
      verified.asOf = Math.max(verified.asOf, this.readAt(projectId, count))
      return true
    }
    // The events of the inserts verified were checked: when those logged up to the newest of them
    // are still just those (none that was logged before became visible since), only the events of
    // the ones logged after are read. Otherwise every event from C on is read again.
    const from = verified?.inserts === count.verified_inserts ? count.unverified_from : clickhouseInstant(build.closedAt)
    const crossing = (own: RunOptions) => run.runner.rows<{ crossing: number }>(this.kind.crossing(projectId, build, from), own)
    const [row] = await this.shared.run(`crossing:${projectId}:${build.version}:${count.inserts}:${from}`, run, crossing)
    if (row!.crossing > 0) return false
    // Requests that shared the check: the first to get here moves the state on.
    const current = this.verified.get(projectId)
    if (current?.version === build.version && current.inserts === count.inserts) return true
    const read = this.counts.get(projectId)
    const asOf = this.readAt(projectId, count)
    const kept = current?.version === build.version && current.stamps.size > 0 ? [current] : []
    this.earlier.set(projectId, [...kept, ...(this.earlier.get(projectId) ?? []).filter((s) => s.version === build.version)].slice(0, EARLIER_STATES))
    this.verified.set(projectId, { version: build.version, inserts: count.inserts, lastLogged: count.last_logged, asOf, stamps: new Map() })
    // The count just read, as a read after the newest insert it counts would have answered it: the
    // next requests within the count's time to live reuse it.
    if (read?.count === count) {
      const closed = clickhouseInstant(build.closedAt)
      this.counts.set(projectId, { ...read, after: count.last_logged, count: { ...count, verified_inserts: count.inserts, unverified_from: closed } })
    }
    return true
  }

  /** When the count was asked for (remembered), or now: every insert committed before it is in the count. */
  private readAt(projectId: string, count: InsertCount): number {
    const read = this.counts.get(projectId)
    return read?.count === count ? read.at : Date.now()
  }

  /** The inserts logged since the build's start of counting, read at most once per `insertsTtlMs` (never remembered from a dry run). */
  private async insertCount(projectId: string, build: B, run: RequestRun, after?: string): Promise<InsertCount> {
    const known = this.counts.get(projectId)
    if (!run.runner.dryRun && known?.version === build.version && known.after === after && Date.now() - known.at < this.insertsTtlMs) return known.count
    const query = { projectId, closedAt: build.closedAt, since: build.insertsSince, verified: after }
    if (run.runner.dryRun) return (await readInsertCounts(run.runner, [query], requestOptions(run)))[0]!
    const key = `inserts:${projectId}:${build.version}:${after}`
    return this.shared.run(key, run, async (own) => {
      const asked = Date.now()
      const count = await this.insertReads.load(key, query, run.runner, own)
      this.counts.set(projectId, { at: asked, version: build.version, after, count })
      return count
    })
  }

  /**
   * The stamp of a snapshot of one part of what comes after C as it is now, for a build `holds`
   * just passed; undefined when the kind takes none or none is written yet (the request then
   * computes its own). A missing or aging snapshot is written in the background lane, beside the
   * requests. A request that arrives while it runs, for the same inserts, waits for it up to
   * `wait.ms` after the write began (outside the gate, counted as shared work it waited on), then
   * computes its part if it is not written by then: on L, each request computing /pages' part held
   * every other request behind it on chDB's one line, and slowed the write. The request that starts
   * the write waits for it only where the part's previous write took `wait.longWriteMs` or more
   * (benchmarks/experiments/starter-holds.ts): on L, /pages' starter computing its part held M's
   * requests behind it for ~500 ms (waiting: ~100, the starter 575 -> 674 ms); M's starters, whose
   * parts are quicker to compute than to write (/metrics 222 ms against 390 waiting), compute.
   */
  async snapshot(projectId: string, build: B, run: RequestRun, part: Part, wait: SnapshotWait): Promise<number | undefined> {
    const verified = this.verified.get(projectId)
    if (!this.kind.snapshots || verified?.version !== build.version) return undefined
    const stamp = verified.stamps.get(part)
    if (run.runner.dryRun || (stamp && Date.now() - stamp.at < SNAPSHOT_MAX_AGE_MS)) return stamp?.id
    const parts = this.snapshots.get(projectId) ?? new Map<Part, Written>()
    this.snapshots.set(projectId, parts)
    const last = parts.get(part)
    const readable = () => {
      const now = verified.stamps.get(part)
      return now && Date.now() - now.at < SNAPSHOT_READ_MAX_AGE_MS ? now.id : undefined
    }
    if (!last?.writing && !(last && Date.now() - last.at < SNAPSHOT_INTERVAL_MS)) {
      const began = Date.now()
      const writing = this.writeSnapshot(projectId, build, verified.inserts, run, part)
        .catch((err: unknown) => this.failed(err, projectId, part))
        .finally(() => parts.set(part, { at: Date.now(), tookMs: Date.now() - began }))
      const started: Written = { at: began, writing, inserts: verified.inserts }
      parts.set(part, started)
      if ((last?.tookMs ?? 0) >= wait.longWriteMs) await waitFor(started, wait.ms, run)
    } else if (last?.writing && last.inserts === verified.inserts && !stamp) {
      await waitFor(last, wait.ms, run)
    }
    // One written for the same inserts is as exact while its rows last (an hour).
    return readable()
  }

  /**
   * The snapshots of the newest state before the current one (same build) with every part written,
   * last found current at most `lagMs` ago, and when; undefined when none is. Its answer is exact
   * for the data as it was then: the build held then as it holds now.
   */
  lagging(projectId: string, build: B, parts: readonly Part[], lagMs: number): { stamps: Map<Part, number>; asOf: number } | undefined {
    const since = Date.now() - lagMs
    const state = (this.earlier.get(projectId) ?? []).find((s) => s.version === build.version && s.asOf >= since && parts.every((p) => s.stamps.has(p)))
    return state && { stamps: new Map(parts.map((p) => [p, state.stamps.get(p)!.id])), asOf: state.asOf }
  }

  /** Resolves when the snapshots being written for the project (or for every project) are. */
  async written(projectId?: string): Promise<void> {
    const projects = projectId === undefined ? [...this.snapshots.values()] : [this.snapshots.get(projectId) ?? new Map()]
    await Promise.all(projects.flatMap((parts) => [...parts.values()].map((p) => p.writing)))
  }

  /** Not under the request's signal or stats: the request may be answered before it ends. */
  private async writeSnapshot(projectId: string, build: B, inserts: number, run: RequestRun, part: Part): Promise<void> {
    const detached = { runner: run.runner, timeoutS: run.timeoutS }
    // Random, so that instances sharing a server do not write under each other's stamps.
    const stamp = randomInt(1, 2 ** 48)
    const write = this.kind.snapshots![part](projectId, build, stamp)
    await writeInLane(run.runner, write, run.timeoutS)
    // Urgent: under a burst the requests waiting for this write would otherwise keep it out of the gate.
    const query = { projectId, closedAt: build.closedAt, since: build.insertsSince }
    const asked = Date.now()
    const [count] = await readInsertCounts(run.runner, [query], { ...requestOptions(detached), urgent: true })
    const verified = this.verified.get(projectId)
    if (count!.inserts !== inserts || verified?.version !== build.version || verified.inserts !== inserts) return
    verified.stamps.set(part, { id: stamp, at: Date.now() })
    verified.asOf = Math.max(verified.asOf, asked)
  }

  /** The project's newest build is to be read again (a build finished, or the data changed under it). */
  forget(projectId: string): void {
    this.latest.delete(projectId)
  }
}

/** Waits for a snapshot write up to `waitMs` after it began, as shared work the request waited on (QueryStats.waited). */
async function waitFor(written: Written, waitMs: number, run: RequestRun): Promise<void> {
  const left = written.at + waitMs - Date.now()
  if (left <= 0 || !written.writing) return
  if (run.stats) run.stats.waited += 1
  let timer: NodeJS.Timeout | undefined
  await Promise.race([written.writing, new Promise<void>((r) => (timer = setTimeout(r, left)))])
  clearTimeout(timer)
}
