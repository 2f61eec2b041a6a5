import type { Statement } from '../clickhouse/run.ts'
import { compileFilters } from './filters.ts'
import type { PageRequest } from './insights.ts'
import { BLOCK_MS, ceilTo, DAY_MS, wholePeriods, type SealedBuild } from './sealed.ts'
import { viewFiltersOnly } from './sealed-filters.ts'
import { SqlParams } from './sql-params.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant } from './time-range.ts'

/**
 * Whether the sealed page tables (sql/schema/023_sealed_pages.sql) can answer a /pages request: any
 * window, in any zone, with filters on the view's own origin or path only: those keep or leave out a
 * page whole (a view carries no other attribute).
 */
export const sealedPagesAnswer = (req: PageRequest): boolean => viewFiltersOnly(req.filters)

/** Writes what /pages adds after C for a build under a stamp (sql/queries/sealed_live_pages_write.sql). */
export const sealedLivePagesWriteStatement = (projectId: string, build: SealedBuild, stamp: number): Statement => ({
  name: 'sealed_live_pages_write',
  sql: renderSql('sealed_live_pages_write'),
  params: { project: projectId, version: build.version, stamp, closed: clickhouseInstant(build.closedAt), held_out: build.pageHeld, held_from: clickhouseInstant(build.pageHeldFrom) },
})

/**
 * /pages from the sealed history. Whole UTC days before C come from the day rows, whole 8-day blocks
 * of them as blocks; C's own day and block hold only what came before C, so a window that reaches C
 * takes them whole. The rest of the window before C comes from the views and sessions, from C on
 * from the events (as the planner wrote them for their present state, when it did).
 */
export function sealedPagesStatement(req: PageRequest, build: SealedBuild): Statement {
  const { start, end } = req.range
  const reachesC = end >= build.closedAt
  const days = wholePeriods(start, reachesC ? ceilTo(build.closedAt, DAY_MS) : end, DAY_MS)
  const blocks = wholePeriods(days.from, reachesC && +days.to >= +build.closedAt ? ceilTo(build.closedAt, BLOCK_MS) : days.to, BLOCK_MS)
  const sealedTo = reachesC ? build.closedAt : end
  const params = new SqlParams()
  const ctx = { project: '{project:String}', from: `{from:DateTime64(3, 'UTC')}`, to: `{to:DateTime64(3, 'UTC')}` }
  return {
    name: 'insights_pages_sealed',
    sql: renderSql('insights_pages_sealed', {
      live_pages: renderSql(build.liveStamp === undefined ? '_sealed_live_pages' : '_sealed_live_pages_snapshot'),
      view_filters: compileFilters(req.filters, 'pageViews', params, ctx),
    }),
    params: {
      ...params.values,
      project: req.projectId,
      version: build.version,
      from: clickhouseInstant(start),
      to: clickhouseInstant(end),
      closed: clickhouseInstant(build.closedAt),
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
