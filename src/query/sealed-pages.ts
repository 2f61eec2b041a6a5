import type { Statement } from '../clickhouse/run.ts'
import { UNINDEXED_SETS } from './filters.ts'
import { WINDOW_CONTEXT, type PageRequest } from './insights.ts'
import { BLOCK_MS, DAY_MS, sealedPeriods, type SealedBuild } from './sealed.ts'
import { liveSource } from './sealed-live.ts'
import { overlapStart, sealedPageFilters, sealedPageFiltering, sessionFiltersOnCountry } from './sealed-filters.ts'
import { SqlParams } from './sql-params.ts'
import { renderSql } from './sql-templates.ts'
import { clickhouseInstant } from './time-range.ts'

/**
 * Whether the sealed page tables (sql/schema/023_sealed_pages.sql) can answer a /pages request: any
 * window, in any zone, with filters on the view's own origin, path or name, or on session attributes.
 */
export const sealedPagesAnswer = (req: PageRequest): boolean => sealedPageFiltering(req.filters, true) !== undefined

/** Whether the request's filters keep views and entries by their session (and so read the live sessions). */
const bySessions = (req: PageRequest): boolean => sealedPageFiltering(req.filters, true) === 'sessions'

/** The parts after C a sealed /pages statement reads: its own, and the live sessions when session filters pick them. */
export const sealedPagesLive = (req: PageRequest) => (bySessions(req) ? (['pages', 'sessions'] as const) : (['pages'] as const))

/**
 * How many UTC days before C's own the visitors after C are looked up in (sql/queries/_sealed_page_seen.sql),
 * and the build keeps each page's last numbers of (sql/queries/sealed_build_page_ends.sql): windows to C
 * that start no earlier are counted from the day rows.
 */
export const SEEN_DAYS = 31

/** Writes what /pages adds after C for a build under a stamp (sql/queries/sealed_live_pages_write.sql). */
export const sealedLivePagesWriteStatement = (projectId: string, build: SealedBuild, stamp: number): Statement => ({
  name: 'sealed_live_pages_write',
  sql: renderSql('sealed_live_pages_write'),
  params: { project: projectId, version: build.version, stamp, closed: clickhouseInstant(build.closedAt), held_out: build.pageHeld, page_held_from: clickhouseInstant(build.pageHeldFrom), seen_days: SEEN_DAYS },
})

/** Where /pages' statement reads what comes after C: the rows written under the build's stamp, or its own `live_pages` CTE. */
const livePagesFragments = (build: SealedBuild) =>
  build.pagesStamp === undefined
    ? { live_pages: `${renderSql('_sealed_live_pages')},`, live_pages_table: 'live_pages', live_pages_stamp: '' }
    : { live_pages: '', live_pages_table: 'sealed_live_pages', live_pages_stamp: renderSql('_sealed_live_pages_stamp') }

/**
 * /pages from the sealed history. Whole UTC days before C come from the day rows, whole 8-day blocks
 * of them as blocks; C's own day and block hold only what came before C, so a window that reaches C
 * takes them whole. The rest of the window before C comes from the views and sessions, from C on
 * from the events (as the planner wrote them for their present state, when it did). Filters on
 * session attributes leave the day rows out: the views and entries are kept by their session; those
 * on the country alone read the day rows by country instead (`byCountry`). A window whose whole days reach C with nothing before C outside them counts its sessions and
 * visitors before C from the day rows (`counted`) instead of merging their bitmaps; one that starts
 * inside a day no earlier than SEEN_DAYS before C's takes of that day's views only the numbers not
 * seen again before C.
 */
export function sealedPagesStatement(req: PageRequest, build: SealedBuild): Statement {
  const { start, end } = req.range
  const reachesC = end >= build.closedAt
  const bySession = bySessions(req)
  const byCountry = bySession && sessionFiltersOnCountry(req.filters)
  const days = bySession && !byCountry ? { from: start, to: start } : sealedPeriods(start, end, DAY_MS, build.closedAt)
  const blocks = sealedPeriods(days.from, days.to, BLOCK_MS, build.closedAt)
  const sealedTo = reachesC ? build.closedAt : end
  const edges = +days.from > +start || +days.to < +sealedTo
  // A window that starts after C has no sealed views: its visitors after C are counted whole.
  const counted =
    reachesC && !bySession && +days.to >= +sealedTo && start < build.closedAt && +start >= +build.closedAt.startOf('day').minus({ days: SEEN_DAYS })
  const params = new SqlParams()
  const filters = sealedPageFilters(req.filters, params, WINDOW_CONTEXT)
  const sessions = { session_filters: filters.sessions }
  const viewSessions = bySession ? renderSql('_sealed_page_view_sessions', sessions) : ''
  const edgeViews = renderSql('_sealed_page_edge_views', { view_sessions: viewSessions })
  return {
    name: 'insights_pages_sealed',
    sql: renderSql('insights_pages_sealed', {
      ...livePagesFragments(build),
      page_filters: filters.page,
      live_sessions: bySession ? `${liveSource(build)},` : '',
      day_parts: byCountry
        ? renderSql('_sealed_page_country_days', sessions)
        : renderSql('_sealed_page_day_parts', { day_sets: renderSql(counted ? '_sealed_page_day_counts' : '_sealed_page_day_sets') }),
      edge_parts: edges
        ? renderSql('_sealed_page_edge_parts', {
            edge_views: counted ? renderSql('_sealed_page_edge_ends', { edge_views: edgeViews }) : edgeViews,
            entry_sessions: bySession ? filters.sessions : '',
          })
        : '',
      live_visitors: `groupBitmapStateIf(vno, kind = 1 AND known = 1${counted ? " AND seen < toDate({days_from:DateTime64(3, 'UTC')})" : ''})`,
      live_view_sessions: bySession ? renderSql('_sealed_page_live_sessions', sessions) : '',
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
      page_held_from: clickhouseInstant(build.pageHeldFrom),
      held_from: clickhouseInstant(build.heldFrom),
      sessions_from: clickhouseInstant(overlapStart(build, start)),
      ...(build.pagesStamp === undefined ? {} : { pages_stamp: build.pagesStamp }),
      ...(bySession && build.liveStamp !== undefined ? { stamp: build.liveStamp } : {}),
      seen_days: SEEN_DAYS,
      limit: req.limit,
      offset: req.offset,
    },
    settings: { enable_materialized_cte: 1, ...(bySession ? UNINDEXED_SETS : {}) },
  }
}
