import type { Statement } from '../clickhouse/run.ts'
import type { PageRequest } from './insights.ts'
import { ceilTo, DAY_MS, wholePeriods, type SealedBuild } from './sealed.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant } from './time-range.ts'

/**
 * Whether the sealed page tables (sql/schema/023_sealed_pages.sql) can answer a /pages request: any
 * window, in any zone, but no filters (their sums are of every view).
 */
export const sealedPagesAnswer = (req: PageRequest): boolean => req.filters.length === 0

/**
 * /pages from the sealed history. Whole UTC days before C come from the day rows; C's own day holds
 * only what came before C, so a window that reaches C takes it whole. The rest of the window before
 * C comes from the views and sessions, from C on from the events.
 */
export function sealedPagesStatement(req: PageRequest, build: SealedBuild): Statement {
  const { start, end } = req.range
  const reachesC = end >= build.closedAt
  const days = wholePeriods(start, reachesC ? ceilTo(build.closedAt, DAY_MS) : end, DAY_MS)
  const sealedTo = reachesC ? build.closedAt : end
  return {
    name: 'insights_pages_sealed',
    sql: renderSql('insights_pages_sealed'),
    params: {
      project: req.projectId,
      version: build.version,
      from: clickhouseInstant(start),
      to: clickhouseInstant(end),
      closed: clickhouseInstant(build.closedAt),
      days_from: clickhouseInstant(days.from),
      days_to: clickhouseInstant(days.to),
      sealed_to: clickhouseInstant(sealedTo < start ? start : sealedTo),
      held_out: build.pageHeld,
      held_from: clickhouseInstant(build.pageHeldFrom),
      limit: req.limit,
      offset: req.offset,
    },
    settings: { enable_materialized_cte: 1 },
  }
}
