import { OpenAPIHono, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { AppEnv } from '../app-env.ts'
import type { Statement } from '../clickhouse/run.ts'
import type { Dimension } from '../query/dimensions.ts'
import type { Filter } from '../query/filters.ts'
import { breakdownStatement, pagesStatement, type PageRequest } from '../query/insights.ts'
import {
  ALL_ROWS,
  assemblePerformance,
  dimensionNamed,
  ENTRY_EXIT_MODES,
  LIST_ROWS,
  PAGE_SORTS,
  pagesPerformanceStatement,
  pagesTopStatement,
  SORT_ORDERS,
  TRAFFIC_GROUPS,
  type PerformanceRow,
} from '../query/insights-traffic.ts'
import { assembleMetrics, metricsBuckets, metricsStatement, type MetricRow } from '../query/metrics.ts'
import { sealedBreakdownStatement } from '../query/sealed.ts'
import { sealedMetricsStatement } from '../query/sealed-metrics.ts'
import { sealedPagesAnswer, sealedPagesStatement } from '../query/sealed-pages.ts'
import { isoWithOffset, resolveRange, type TimeRange } from '../query/time-range.ts'
import type { SealedHistory } from '../services/sealed/index.ts'
import { BreakdownRow, MetricValues } from './insights.ts'
import { insightsRoute } from './insights-route.ts'
import { RANGE_HEADERS, SEALED_HEADERS } from './openapi-shared.ts'
import { FiltersSchema, rangeHeaders, windowParams } from './params.ts'
import { jsonParam } from './query-reader.ts'
import { sealedBuildFor, sealedStatementFor } from './sealed-build.ts'

export interface InsightsTrafficDeps {
  now: () => Date
  queryTimeoutS: number
  sealed?: SealedHistory
}

/** Without `range` or dates these routes cover OpenPanel's default, the last 30 days (and today). */
const DEFAULT_RANGE = '30d'

/**
 * OpenPanel drops `filters` on these routes; they are applied here, as on the routes these restate
 * (a dashboard's drill-down then narrows every widget alike).
 */
const DatesQuery = z.object({ ...windowParams(DEFAULT_RANGE), filters: jsonParam(FiltersSchema).optional() }).strict()

const OverviewQuery = DatesQuery.extend({
  interval: z.enum(['hour', 'day', 'week', 'month']).default('day').openapi({ description: 'Bucket size of the series; weeks start on Monday' }),
}).strict()

const EntryExitQuery = DatesQuery.extend({
  mode: z.enum(['entry', 'exit']).default('entry').openapi({ description: "Rank the sessions' first (entry) or last (exit) page" }),
}).strict()

const PerformanceQuery = DatesQuery.extend({
  search: z.string().max(256).optional().openapi({ description: 'Keep the pages whose path, origin or title contains this text (case-sensitive; % and _ are literal)' }),
  sortBy: z.enum(PAGE_SORTS).default('sessions'),
  sortOrder: z.enum(SORT_ORDERS).default('desc'),
  limit: z.coerce.number().int().min(1).max(500).default(50),
}).strict()

const trafficQuery = (names: readonly [string, ...string[]]) =>
  DatesQuery.extend({
    breakdown: z.enum(names).default(names[0]).openapi({ description: `The session attribute to group by; default ${names[0]}` }),
  }).strict()

const OverviewBody = z
  .object({
    summary: MetricValues,
    series: z.array(MetricValues.extend({ date: z.string() })),
    interval: z.string(),
    startDate: z.string().openapi({ description: 'Start of the resolved window, ISO 8601 with its offset' }),
    endDate: z.string().openapi({ description: 'End of the resolved window (exclusive), ISO 8601 with its offset' }),
  })
  .openapi('Overview')

const TopPageRow = z
  .object({ origin: z.string(), path: z.string(), sessions: z.number(), pageviews: z.number(), revenue: z.number() })
  .openapi('TopPageRow')

const EntryExitRow = TopPageRow.extend({ visitors: z.number(), bounce_rate: z.number(), avg_session_duration: z.number() }).openapi('EntryExitRow')

const PerformanceBody = z
  .object({
    total_pages: z.number().openapi({ description: 'Pages of the window that match the search' }),
    shown: z.number(),
    pages: z.array(
      z.object({
        origin: z.string(),
        path: z.string(),
        title: z.string(),
        sessions: z.number(),
        pageviews: z.number(),
        bounce_rate: z.number(),
        avg_duration: z.number().openapi({ description: 'Mean time on page, in minutes' }),
        seo_signals: z.object({ high_bounce: z.boolean(), low_engagement: z.boolean(), good_landing_page: z.boolean() }),
      }),
    ),
  })
  .openapi('PagePerformance')

export function insightsTrafficRoutes(deps: InsightsTrafficDeps) {
  const app = new OpenAPIHono<AppEnv>()
  const run = (c: Context<AppEnv>) => ({ timeoutS: deps.queryTimeoutS, stats: c.get('stats'), signal: c.req.raw.signal })
  const rows = <T>(c: Context<AppEnv>, statement: Statement) => c.get('runner').rows<T>(statement, run(c))

  /** The request's window, stated in the response headers. */
  const windowOf = (c: Context<AppEnv>, q: z.infer<typeof DatesQuery>): TimeRange => {
    const range = resolveRange(q, q.timezone ?? c.get('project').timezone, deps.now(), DEFAULT_RANGE)
    for (const [name, value] of Object.entries(rangeHeaders(range.start, range.end, range.timezone))) c.header(name, value)
    return range
  }
  const listRequest = (c: Context<AppEnv>, range: TimeRange, filters: Filter[], limit: number): PageRequest => ({ projectId: c.get('project').id, range, filters, limit, offset: 0 })

  /** A breakdown route's statement for the whole list, from the sealed history where a build holds. */
  const breakdown = async (c: Context<AppEnv>, dimension: Dimension, range: TimeRange, filters: Filter[]) => {
    const req = listRequest(c, range, filters, LIST_ROWS)
    const build = await sealedBuildFor(c, deps.sealed, range.timezone, 'sessions')
    return rows<z.infer<typeof BreakdownRow>>(c, build ? await sealedStatementFor(c, deps.sealed, build, (p) => sealedBreakdownStatement(dimension, req, build, p)) : breakdownStatement(dimension, req))
  }

  /** The /pages ranking of the whole window, from the sealed history where a build holds. */
  const pageRanking = async (c: Context<AppEnv>, range: TimeRange, filters: Filter[]): Promise<Statement> => {
    const req = listRequest(c, range, filters, ALL_ROWS)
    const build = sealedPagesAnswer(req) ? await sealedBuildFor(c, deps.sealed, range.timezone, 'pages') : undefined
    return build ? sealedPagesStatement(req, build) : pagesStatement(req)
  }

  const overview = insightsRoute('overview', "OpenPanel's overview: the /metrics totals and series of the window", OverviewQuery, OverviewBody, { headers: { ...RANGE_HEADERS, ...SEALED_HEADERS } })
  app.openapi(overview, async (c) => {
    const q = c.req.valid('query')
    const range = windowOf(c, q)
    const bucketStarts = metricsBuckets(range, q.interval)
    const req = { projectId: c.get('project').id, range, interval: q.interval, filters: q.filters ?? [] }
    const build = await sealedBuildFor(c, deps.sealed, range.timezone, 'sessions')
    const statement = build ? await sealedStatementFor(c, deps.sealed, build, (p) => sealedMetricsStatement(req, bucketStarts, build, p)) : metricsStatement(req)
    const metrics = assembleMetrics(await rows<MetricRow>(c, statement), bucketStarts, false)
    return c.json({ summary: metrics.metrics, series: metrics.series, interval: q.interval, startDate: isoWithOffset(range.start), endDate: isoWithOffset(range.end) }, 200)
  })

  const top = insightsRoute('pages/top', 'Up to 1000 pages by sessions, with their page views and revenue', DatesQuery, z.array(TopPageRow), { headers: { ...RANGE_HEADERS, ...SEALED_HEADERS } })
  app.openapi(top, async (c) => {
    const q = c.req.valid('query')
    return c.json(await rows<z.infer<typeof TopPageRow>>(c, pagesTopStatement(await pageRanking(c, windowOf(c, q), q.filters ?? []), q.filters ?? [])), 200)
  })

  const entryExit = insightsRoute('pages/entry_exit', 'Up to 1000 entry or exit pages by sessions', EntryExitQuery, z.array(EntryExitRow), { headers: { ...RANGE_HEADERS, ...SEALED_HEADERS } })
  app.openapi(entryExit, async (c) => {
    const q = c.req.valid('query')
    const found = await breakdown(c, dimensionNamed(ENTRY_EXIT_MODES[q.mode]), windowOf(c, q), q.filters ?? [])
    return c.json(found.map(({ prefix, name, ...row }) => ({ origin: prefix ?? '', path: name ?? '', ...row })), 200)
  })

  const performance = insightsRoute('pages/performance', 'Pages with bounce rate, time on page and heuristic SEO signals, searched and sorted', PerformanceQuery, PerformanceBody, { headers: { ...RANGE_HEADERS, ...SEALED_HEADERS } })
  app.openapi(performance, async (c) => {
    const q = c.req.valid('query')
    const statement = pagesPerformanceStatement(await pageRanking(c, windowOf(c, q), q.filters ?? []), q)
    return c.json(assemblePerformance(await rows<PerformanceRow>(c, statement)), 200)
  })

  for (const [group, names] of Object.entries(TRAFFIC_GROUPS)) {
    const route = insightsRoute(`traffic/${group}`, `Up to 1000 rows of sessions by ${names.join(', ')}`, trafficQuery(names), z.array(BreakdownRow), { headers: { ...RANGE_HEADERS, ...SEALED_HEADERS } })
    app.openapi(route, async (c) => {
      const q = c.req.valid('query')
      const dimension = dimensionNamed(q.breakdown)
      const found = await breakdown(c, dimension, windowOf(c, q), q.filters ?? [])
      return c.json(dimension.prefix ? found : found.map(({ prefix: _, ...row }) => row), 200)
    })
  }
  return app
}
