import { DateTime } from 'luxon'
import type { Logger } from 'pino'
import type { QueryRunner, QueryStats, Statement } from '../clickhouse/run.ts'
import type { Config } from '../config.ts'
import type { PageRequest } from './insights.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant } from './time-range.ts'

/**
 * /pages rollups (sql/schema/011_page_rollups.sql): a project's events before an instant C summed
 * once by local day, so that a window reaching the present reads them and only what came after C.
 * C is the start of an hour at least SETTLE_HOURS old, so a request reads one to two hours of
 * events (and the few sessions held out) besides the rollup.
 *
 * A rollup answers a request when the request has no filters (the rollup holds every view), its
 * timezone is the rollup's, its window starts at a local midnight before C and ends after C, and
 * the data under it is as it was built (`holds`). Otherwise insights_pages answers, as always.
 *
 * C moves forward by a new build once the rollup is behind by an hour, or by 30 times its last
 * build's duration if that is longer (a project whose build takes two minutes moves C once an
 * hour, one whose build takes ten minutes every five hours). A build runs in the background when a
 * request finds the rollup missing, changed or behind, at most once per `rebuildIntervalMs` per
 * project; until it is done, requests are answered from the rollup they had, or from insights_pages.
 */
export interface PageRollup {
  version: number
  timezone: string
  /** C: the rollup holds what came before. */
  closedAt: DateTime
  /** The sessions held out of the rollup (128-bit keys in decimal), and their first event (C when there are none). */
  heldOut: string[]
  heldFrom: DateTime
  /** What tells that an insert reached before C since the build (see `holds`). */
  insertsSince: DateTime
  inserts: number
}

export interface PageRollupsOptions {
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

/** The request the planning statements belong to: they count in its stats and stop with it. */
interface RequestRun {
  signal?: AbortSignal
  stats?: QueryStats
}

interface Project {
  id: string
  timezone: string
}

interface LatestRow {
  version: number
  timezone: string
  closed_at: string
  held_out: string[]
  held_from: string
  built_at: string
  inserts_since: string
  inserts: number
}

/** An hour becomes C once it is this old: sessions open across it have mostly ended. */
const SETTLE_HOURS = 1
/** The rollup is behind once the newest C is this far ahead, or 30 builds' time if that is longer. */
const MOVE_AFTER_MS = 3_600_000
const MOVE_AFTER_BUILDS = 30
/** Inserts are counted from this long before a build: older ones committed long before it read. */
const INSERTS_MARGIN_HOURS = 24
/** event_inserts keeps 30 days; an older rollup would count inserts it can no longer see. */
const MAX_AGE_DAYS = 25
/** A build reads all of a project's events before C once: 44 s for the 15.1M events of the largest at 100M. */
const DEFAULT_BUILD_TIMEOUT_S = 900
const DEFAULT_REBUILD_INTERVAL_MS = 5 * 60_000
/** How long the newest build read from page_rollups is trusted before it is read again. */
const LATEST_TTL_MS = 5_000

const BUILD_STEPS = ['held_out', 'views', 'repeats', 'entries', 'keys', 'visitors'].map((step) => `page_rollup_build_${step}`)
const ROLLUP_TABLES = ['page_rollup_days', 'page_rollup_keys', 'page_rollups'] as const
const COMPACTED_TABLES = ['page_rollup_days', 'page_rollup_keys'] as const

const instant = (text: string) => DateTime.fromSQL(text, { zone: 'UTC' })

/** The newest start of an hour at least SETTLE_HOURS old (of the project's hours, which some zones offset by 30 or 45 minutes). */
export function newestClosing(now: DateTime, timezone: string): DateTime {
  return now.setZone(timezone).minus({ hours: SETTLE_HOURS }).startOf('hour')
}

/** The rollups `quarry serve` runs with, or none when QUARRY_PAGE_ROLLUPS=0. */
export function configuredPageRollups(
  config: Pick<Config, 'QUARRY_PAGE_ROLLUPS' | 'QUARRY_QUERY_TIMEOUT_S'>,
  deps: Pick<PageRollupsOptions, 'runner' | 'logger'> & { now?: () => Date },
): PageRollups | undefined {
  if (!config.QUARRY_PAGE_ROLLUPS) return undefined
  return new PageRollups({ now: () => new Date(), ...deps, queryTimeoutS: config.QUARRY_QUERY_TIMEOUT_S })
}

export class PageRollups {
  private readonly building = new Map<string, Promise<void>>()
  private readonly lastScheduled = new Map<string, number>()
  private readonly latest = new Map<string, { read: number; rollup: PageRollup | undefined; builtAt?: DateTime }>()
  /** Per project, how long its last build took. */
  private readonly buildMs = new Map<string, number>()
  /** Per project, the rollup and insert count at which no session crossed its C. */
  private readonly verified = new Map<string, { version: number; inserts: number }>()

  private readonly opts: Required<PageRollupsOptions>

  constructor(opts: PageRollupsOptions) {
    this.opts = { buildTimeoutS: DEFAULT_BUILD_TIMEOUT_S, rebuildIntervalMs: DEFAULT_REBUILD_INTERVAL_MS, ...opts }
  }

  /**
   * The rollup that answers this /pages request exactly, or undefined. Schedules a build when the
   * project has none, the data changed under it, or it is behind.
   */
  async forRequest(project: Project, req: PageRequest, run: RequestRun = {}): Promise<PageRollup | undefined> {
    const start = req.range.start.setZone(req.range.timezone)
    if (req.filters.length > 0 || +start !== +start.startOf('day')) return undefined
    const rollup = await this.newest(project.id, run)
    if (!rollup || rollup.timezone !== project.timezone || this.behind(project, rollup)) this.schedule(project)
    if (!rollup || rollup.timezone !== req.range.timezone) return undefined
    if (!(req.range.start < rollup.closedAt && req.range.end > rollup.closedAt)) return undefined
    if (await this.holds(project.id, rollup, run)) return rollup
    this.latest.delete(project.id)
    this.schedule(project)
    return undefined
  }

  /**
   * Whether the data under the rollup is as it was built: no insert since reached before C, and no
   * event after C ties a session of the rollup to what came before. The second takes a pass over the
   * events after C, so it is taken again only when something was inserted since it last passed.
   */
  private async holds(projectId: string, rollup: PageRollup, run: RequestRun): Promise<boolean> {
    const opts = { timeoutS: this.opts.queryTimeoutS, ...run }
    const params = { project: projectId, version: rollup.version, closed: clickhouseInstant(rollup.closedAt) }
    const [count] = await this.opts.runner.rows<{ inserts: number; closed_inserts: number }>(
      { name: 'page_rollup_inserts', sql: renderSql('page_rollup_inserts'), params: { ...params, since: clickhouseInstant(rollup.insertsSince) } },
      opts,
    )
    if (count!.closed_inserts !== rollup.inserts) return false
    const verified = this.verified.get(projectId)
    if (verified?.version === rollup.version && verified.inserts === count!.inserts) return true
    const [row] = await this.opts.runner.rows<{ crossing: number }>(
      { name: 'page_rollup_crossing', sql: renderSql('page_rollup_crossing'), params },
      opts,
    )
    if (row!.crossing > 0) return false
    this.verified.set(projectId, { version: rollup.version, inserts: count!.inserts })
    return true
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
    const build = this.buildOnce(project).finally(() => {
      this.building.delete(project.id)
      this.latest.delete(project.id)
    })
    this.building.set(project.id, build)
    return build
  }

  private async newest(projectId: string, run: RequestRun): Promise<PageRollup | undefined> {
    const cached = this.latest.get(projectId)
    let entry = cached && Date.now() - cached.read < LATEST_TTL_MS ? cached : undefined
    if (!entry) {
      const [row] = await this.opts.runner.rows<LatestRow>(
        { name: 'page_rollup_latest', sql: renderSql('page_rollup_latest'), params: { project: projectId } },
        { timeoutS: this.opts.queryTimeoutS, ...run },
      )
      entry = {
        read: Date.now(),
        builtAt: row && instant(row.built_at),
        rollup: row && {
          version: row.version,
          timezone: row.timezone,
          closedAt: instant(row.closed_at),
          heldOut: row.held_out,
          heldFrom: instant(row.held_from),
          insertsSince: instant(row.inserts_since),
          inserts: row.inserts,
        },
      }
      this.latest.set(projectId, entry)
    }
    // Compared with the engine's clock at build time; both are wall clocks of the same era.
    return entry.builtAt && entry.builtAt > DateTime.utc().minus({ days: MAX_AGE_DAYS }) ? entry.rollup : undefined
  }

  private schedule(project: Project): void {
    const last = this.lastScheduled.get(project.id) ?? -Infinity
    if (this.building.has(project.id) || Date.now() - last < this.opts.rebuildIntervalMs) return
    this.lastScheduled.set(project.id, Date.now())
    this.build(project).catch((err: unknown) => this.opts.logger.warn({ err, project: project.id }, 'page rollup build failed'))
  }

  private async buildOnce(project: Project): Promise<void> {
    const { runner, logger } = this.opts
    const started = performance.now()
    const read = { timeoutS: this.opts.buildTimeoutS }
    const [clock] = await runner.rows<{ now: string; previous: number }>(
      { name: 'page_rollup_clock', sql: renderSql('page_rollup_clock'), params: { project: project.id } },
      read,
    )
    const built = instant(clock!.now)
    const version = built.toMillis()
    const closedAt = newestClosing(DateTime.fromJSDate(this.opts.now()), project.timezone)
    const params = {
      project: project.id,
      version,
      timezone: project.timezone,
      closed: clickhouseInstant(closedAt),
      since: clickhouseInstant(built.minus({ hours: INSERTS_MARGIN_HOURS })),
    }
    const countInserts = async () => {
      const [row] = await runner.rows<{ closed_inserts: number }>({ name: 'page_rollup_inserts', sql: renderSql('page_rollup_inserts'), params }, read)
      return row!.closed_inserts
    }
    const before = await countInserts()
    try {
      for (const name of BUILD_STEPS) {
        await runner.command({ name, sql: `${renderSql(name)}\nSETTINGS max_execution_time = ${this.opts.buildTimeoutS}`, params })
      }
    } catch (err) {
      await this.drop(project.id, version).catch(() => {})
      throw err
    }
    // An insert reaching before C while the build read may be half in the rollup: not kept.
    if ((await countInserts()) !== before) {
      await this.drop(project.id, version)
      logger.info({ project: project.id }, 'page rollup: events before C changed while building; not kept')
      return
    }
    for (const table of COMPACTED_TABLES) {
      await runner.command({ name: 'page_rollup_compact', sql: renderSql('page_rollup_compact', { table }), params: { project: project.id, version } })
    }
    await runner.command({
      name: 'page_rollup_register',
      sql: renderSql('page_rollup_register'),
      params: { ...params, built: clickhouseInstant(built), inserts: before },
    })
    // The build replaced is kept: requests planned with it may still be reading.
    if (clock!.previous > 0) {
      const older = await runner.rows<{ version: number }>(
        { name: 'page_rollup_versions', sql: renderSql('page_rollup_versions'), params: { project: project.id, keep: clock!.previous } },
        read,
      )
      for (const { version: old } of older) await this.drop(project.id, old)
    }
    const ms = Math.round(performance.now() - started)
    this.buildMs.set(project.id, ms)
    logger.info({ project: project.id, closedAt: closedAt.toISO(), ms }, 'page rollup built')
  }

  /** Removes one build of the project from every rollup table. */
  private async drop(projectId: string, version: number): Promise<void> {
    for (const table of ROLLUP_TABLES) {
      await this.opts.runner.command({ name: 'page_rollup_drop', sql: renderSql('page_rollup_drop', { table }), params: { project: projectId, version } })
    }
  }
}

/** insights_pages_rollup for a request the rollup may answer (see PageRollups.forRequest). */
export function pagesRollupStatement(req: PageRequest, rollup: PageRollup): Statement {
  return {
    name: 'insights_pages_rollup',
    sql: renderSql('insights_pages_rollup'),
    params: {
      project: req.projectId,
      version: rollup.version,
      timezone: rollup.timezone,
      from: clickhouseInstant(req.range.start),
      closed: clickhouseInstant(rollup.closedAt),
      held_out: rollup.heldOut,
      held_from: clickhouseInstant(rollup.heldFrom),
      to: clickhouseInstant(req.range.end),
      limit: req.limit,
      offset: req.offset,
    },
    settings: { enable_materialized_cte: 1 },
  }
}
