import type { Statement } from '../clickhouse/run.ts'
import type { PageRequest } from './insights.ts'
import { BLOCK_MS, ceilTo, DAY_MS, HOUR_MS, wholePeriods, type SealedBuild } from './sealed.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant } from './time-range.ts'

/**
 * Whether the sealed page tables (sql/schema/023_sealed_pages.sql) can answer a /pages request: any
 * window, in any zone, but no filters (their sums are of every view).
 */
export const sealedPagesAnswer = (req: PageRequest): boolean => req.filters.length === 0

/** Writes what /pages adds after C for a build under a stamp (sql/queries/sealed_live_pages_write.sql). */
export const sealedLivePagesWriteStatement = (projectId: string, build: SealedBuild, stamp: number): Statement => ({
  name: 'sealed_live_pages_write',
  sql: renderSql('sealed_live_pages_write'),
  params: { project: projectId, version: build.version, stamp, closed: clickhouseInstant(build.closedAt), held_out: build.pageHeld, held_from: clickhouseInstant(build.pageHeldFrom) },
})

/**
 * /pages from the sealed history. Before C, whole 8-day blocks, UTC days and UTC hours come from
 * their rows, the longest that fit; C's own day and block hold only what came before C, so a window
 * that reaches C takes them whole. The rest of an hour at each end comes from the views and
 * sessions, and C on from the events (as the planner wrote them for their present state, when it did).
 */
export function sealedPagesStatement(req: PageRequest, build: SealedBuild): Statement {
  const { start, end } = req.range
  const reachesC = end >= build.closedAt
  const sealedTo = reachesC ? build.closedAt : end
  const hours = wholePeriods(start, sealedTo < start ? start : sealedTo, HOUR_MS)
  const days = wholePeriods(hours.from, reachesC ? ceilTo(build.closedAt, DAY_MS) : hours.to, DAY_MS)
  const blocks = wholePeriods(days.from, reachesC && +days.to >= +build.closedAt ? ceilTo(build.closedAt, BLOCK_MS) : days.to, BLOCK_MS)
  return {
    name: 'insights_pages_sealed',
    sql: renderSql('insights_pages_sealed', { live_pages: renderSql(build.liveStamp === undefined ? '_sealed_live_pages' : '_sealed_live_pages_snapshot') }),
    params: {
      project: req.projectId,
      version: build.version,
      from: clickhouseInstant(start),
      to: clickhouseInstant(end),
      closed: clickhouseInstant(build.closedAt),
      hours_from: clickhouseInstant(hours.from),
      hours_to: clickhouseInstant(hours.to),
      days_from: clickhouseInstant(days.from),
      days_to: clickhouseInstant(days.to),
      blocks_from: clickhouseInstant(blocks.from),
      blocks_to: clickhouseInstant(blocks.to),
      sealed_to: clickhouseInstant(sealedTo < start ? start : sealedTo),
      held_out: build.pageHeld,
      held_from: clickhouseInstant(build.pageHeldFrom),
      ...(build.liveStamp === undefined ? {} : { stamp: build.liveStamp }),
      limit: req.limit,
      offset: req.offset,
    },
    settings: { enable_materialized_cte: 1 },
  }
}
