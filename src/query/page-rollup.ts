import { DateTime } from 'luxon'
import type { Statement } from '../clickhouse/run.ts'
import type { PageRequest } from './insights.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant } from './time-range.ts'

/**
 * A /pages rollup (sql/schema/011_page_rollups.sql): a project's events before an instant C summed
 * once by local day, so that a window reaching the present reads them and only what came after C.
 * The statements here are pure; src/services/page-rollups decides when to build and whether a
 * rollup answers a request.
 */
export interface PageRollup {
  version: number
  timezone: string
  /** C: the rollup holds what came before. */
  closedAt: DateTime
  /** The sessions held out of the rollup (128-bit keys in decimal), and their first event (C when there are none). */
  heldOut: string[]
  heldFrom: DateTime
  /** What tells that an insert reached before C since the build (see the planner's `holds`). */
  insertsSince: DateTime
  inserts: number
}

/** An hour becomes C once it is this old: sessions open across it have mostly ended. */
const SETTLE_HOURS = 1

/** The newest start of an hour at least SETTLE_HOURS old (of the project's hours, which some zones offset by 30 or 45 minutes). */
export function newestClosing(now: DateTime, timezone: string): DateTime {
  return now.setZone(timezone).minus({ hours: SETTLE_HOURS }).startOf('hour')
}

/** Whether a rollup can answer the request at all, before asking whether the data under it held. */
export function rollupCovers(rollup: PageRollup, req: PageRequest): boolean {
  return rollup.timezone === req.range.timezone && req.range.start < rollup.closedAt && req.range.end > rollup.closedAt
}

/** Only a window without filters that starts at a local midnight can be read from day rows. */
export function rollupMayAnswer(req: PageRequest): boolean {
  const start = req.range.start.setZone(req.range.timezone)
  return req.filters.length === 0 && +start === +start.startOf('day')
}

const instant = (text: string) => DateTime.fromSQL(text, { zone: 'UTC' })

/** One row of sql/queries/page_rollup_latest.sql. */
export interface PageRollupLatestRow {
  version: number
  timezone: string
  closed_at: string
  held_out: string[]
  held_from: string
  built_at: string
  inserts_since: string
  inserts: number
}

export const latestRollupStatement = (projectId: string): Statement => ({
  name: 'page_rollup_latest',
  sql: renderSql('page_rollup_latest'),
  params: { project: projectId },
})

/** The newest build of a project from its page_rollup_latest row, and when it was built. */
export function readLatestRollup(row: PageRollupLatestRow | undefined): { build: PageRollup; builtAt: DateTime } | undefined {
  if (!row) return undefined
  return {
    builtAt: instant(row.built_at),
    build: {
      version: row.version,
      timezone: row.timezone,
      closedAt: instant(row.closed_at),
      heldOut: row.held_out,
      heldFrom: instant(row.held_from),
      insertsSince: instant(row.inserts_since),
      inserts: row.inserts,
    },
  }
}

/** How many sessions of the rollup events after C now tie to what came before. */
export const rollupCrossingStatement = (projectId: string, rollup: PageRollup): Statement => ({
  name: 'page_rollup_crossing',
  sql: renderSql('page_rollup_crossing'),
  params: { project: projectId, version: rollup.version, closed: clickhouseInstant(rollup.closedAt) },
})

/** insights_pages_rollup for a request a rollup answers. */
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
