import type { Statement } from '../clickhouse/run.ts'
import { findDimension, type Dimension } from './dimensions.ts'
import { compileFilters, type Filter } from './filters.ts'
import { WINDOW_CONTEXT } from './insights.ts'
import { SqlParams } from './sql-params.ts'
import { renderSql } from './sql-templates.ts'


/** OpenPanel's cap on the rows of its lists (MAX_RECORDS_LIMIT); these routes have no cursor. */
export const LIST_ROWS = 1000

/** The largest `limit` a statement binds: a page ranking read whole, for a statement around it to cut. */
export const ALL_ROWS = 4_294_967_295

/**
 * OpenPanel's /traffic/{group} routes: the breakdown dimensions each may group by, its default first
 * (contract-more §6). The names are the dimension registry's; each answers as that breakdown route.
 */
export const TRAFFIC_GROUPS = {
  referrers: ['referrer_name', 'referrer_type', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign'],
  geo: ['country', 'region', 'city'],
  devices: ['device', 'browser', 'os'],
} as const satisfies Record<string, readonly [string, ...string[]]>
export type TrafficGroup = keyof typeof TRAFFIC_GROUPS

/** /pages/entry_exit's modes and the breakdowns answering them. */
export const ENTRY_EXIT_MODES = { entry: 'entry_page', exit: 'exit_page' } as const

/** A registry dimension by name; a name missing from it is a programming error, caught at load. */
export function dimensionNamed(name: string): Dimension {
  const dimension = findDimension(name)
  if (!dimension) throw new Error(`no dimension ${name}`)
  return dimension
}
for (const name of [...Object.values(TRAFFIC_GROUPS).flat(), ...Object.values(ENTRY_EXIT_MODES)]) dimensionNamed(name)

/**
 * pages/top: the ranking of `pages` (the /pages statement or its rollup's, read whole) without the
 * empty path, with the revenue of the window's events recorded on each page; with filters, of the
 * revenue events they keep as they keep page views (event attributes on the event, session ones on
 * its session).
 */
export function pagesTopStatement(pages: Statement, filters: readonly Filter[]): Statement {
  const params = new SqlParams({ ...pages.params, page_limit: LIST_ROWS }, 'top')
  return {
    name: `insights_pages_top:${pages.name}`,
    sql: renderSql('insights_pages_top', { pages: pages.sql, revenue_filters: compileFilters(filters, 'pageViews', params, WINDOW_CONTEXT) }),
    params: params.values,
    ...(pages.settings ? { settings: pages.settings } : {}),
  }
}

export const PAGE_SORTS = ['sessions', 'pageviews', 'bounce_rate', 'avg_duration'] as const
export const SORT_ORDERS = ['asc', 'desc'] as const

export interface PerformanceRequest {
  search?: string
  sortBy: (typeof PAGE_SORTS)[number]
  sortOrder: (typeof SORT_ORDERS)[number]
  limit: number
}

/**
 * pages/performance over the ranking of `pages` read whole: the pages whose path, origin or title
 * contains `search` (literally, case-sensitive), sorted by an allow-listed column, cut to `limit`,
 * each carrying how many pages matched.
 */
export function pagesPerformanceStatement(pages: Statement, req: PerformanceRequest): Statement {
  const column = PAGE_SORTS.find((s) => s === req.sortBy)
  if (!column) throw new Error(`no page sort ${req.sortBy}`)
  const params: Record<string, unknown> = { ...pages.params, page_limit: req.limit }
  let search = ''
  if (req.search !== undefined && req.search !== '') {
    params.search = req.search
    search = ' AND (position(p.path, {search:String}) > 0 OR position(p.origin, {search:String}) > 0 OR position(p.title, {search:String}) > 0)'
  }
  return {
    name: `insights_pages_performance:${pages.name}`,
    sql: renderSql('insights_pages_performance', {
      pages: pages.sql,
      search,
      sort: `p.${column} ${req.sortOrder === 'asc' ? 'ASC' : 'DESC'}`,
    }),
    params,
    ...(pages.settings ? { settings: pages.settings } : {}),
  }
}

/** One row of sql/queries/insights_pages_performance.sql. */
export interface PerformanceRow {
  origin: string
  path: string
  title: string
  sessions: number
  pageviews: number
  bounce_rate: number
  minutes: number
  total_pages: number
}

/**
 * OpenPanel's page heuristics, from the bounce rate (percent) and the mean time on page (minutes);
 * they read no search-engine data.
 */
export const seoSignals = (bounceRate: number, minutes: number) => ({
  high_bounce: bounceRate > 70,
  low_engagement: minutes < 1,
  good_landing_page: bounceRate < 40 && minutes > 2,
})

/** The body of pages/performance. */
export function assemblePerformance(rows: readonly PerformanceRow[]) {
  return {
    total_pages: rows[0]?.total_pages ?? 0,
    shown: rows.length,
    pages: rows.map(({ minutes, total_pages: _, ...row }) => ({ ...row, avg_duration: minutes, seo_signals: seoSignals(row.bounce_rate, minutes) })),
  }
}
