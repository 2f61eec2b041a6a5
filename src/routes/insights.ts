import { OpenAPIHono, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { DateTime } from 'luxon'
import type { AppEnv } from '../app-env.ts'
import type { Statement } from '../clickhouse/run.ts'
import { DIMENSIONS, type Dimension } from '../query/dimensions.ts'
import { breakdownStatement, liveStatement, pagesStatement, type PageRequest } from '../query/insights.ts'
import { assembleMetrics, metricsBuckets, metricsStatement, METRIC_NAMES } from '../query/metrics.ts'
import { fingerprint, nextCursor, pagePosition } from '../query/pagination.ts'
import { defaultInterval, INTERVALS, previousRange, resolveRange, type TimeRange } from '../query/time-range.ts'
import type { LivePart, SealedHistory } from '../services/sealed/index.ts'
import { sealedBreakdownStatement } from '../query/sealed.ts'
import { sealedMetricsStatement } from '../query/sealed-metrics.ts'
import { sealedPagesAnswer, sealedPagesLive, sealedPagesStatement } from '../query/sealed-pages.ts'
import { insightsRoute } from './insights-route.ts'
import { PAGE_HEADERS, RANGE_HEADERS, SEALED_HEADERS } from './openapi-shared.ts'
import { anyText, FiltersSchema, ignoredParam, rangeHeaders, windowParams } from './params.ts'
import { jsonParam } from './query-reader.ts'
import { sealedBuildFor, sealedStatementFor } from './sealed-build.ts'

export interface InsightsDeps {
  signingKey: Buffer
  now: () => Date
  queryTimeoutS: number
  sealed?: SealedHistory
}

const WindowQuery = z.object({ ...windowParams('7d'), filters: jsonParam(FiltersSchema).optional() }).strict()

/** OpenPanel answers up to this many rows where no limit is asked for; a cursor pages beyond. */
const MAX_ROWS = 1000

const ListQuery = WindowQuery.extend({
  limit: z.coerce.number().int().min(1).max(MAX_ROWS).default(MAX_ROWS),
  cursor: z.string().max(4096).optional().openapi({ description: 'X-Next-Cursor of the previous page, or a 1-based page number' }),
}).strict()

const MetricsQuery = WindowQuery.extend({
  limit: ignoredParam(anyText, '/metrics returns every bucket').optional(),
  cursor: ignoredParam(anyText, '/metrics returns every bucket').optional(),
  interval: z.enum(INTERVALS).optional().openapi({ description: 'Bucket size; by default chosen from the span as OpenPanel does' }),
  previous: z.enum(['true', 'false']).optional().openapi({ description: 'Add the totals of the equally long period just before' }),
}).strict()

export const MetricValues = z.object(Object.fromEntries(METRIC_NAMES.map((name) => [name, z.number()])) as Record<(typeof METRIC_NAMES)[number], z.ZodNumber>)
const MetricsBody = z
  .object({
    metrics: MetricValues,
    series: z.array(MetricValues.extend({ date: z.string() })),
    previous: MetricValues.optional(),
  })
  .openapi('Metrics')
const LiveBody = z.object({ visitors: z.number() }).openapi('Live')
const PageRow = z
  .object({
    origin: z.string(),
    path: z.string(),
    title: z.string(),
    sessions: z.number(),
    visitors: z.number(),
    pageviews: z.number(),
    bounce_rate: z.number(),
    avg_duration: z.number(),
  })
  .openapi('PageRow')
export const BreakdownRow = z
  .object({
    name: z.string().nullable(),
    prefix: z.string().nullable().optional(),
    sessions: z.number(),
    visitors: z.number(),
    pageviews: z.number(),
    bounce_rate: z.number(),
    avg_session_duration: z.number(),
    revenue: z.number(),
  })
  .openapi('BreakdownRow')

function describeRange(c: Context<AppEnv>, range: TimeRange) {
  for (const [name, value] of Object.entries(rangeHeaders(range.start, range.end, range.timezone))) c.header(name, value)
}

export function insightsRoutes(deps: InsightsDeps) {
  const app = new OpenAPIHono<AppEnv>()
  const run = (c: Context<AppEnv>) => ({ timeoutS: deps.queryTimeoutS, stats: c.get('stats'), signal: c.req.raw.signal })
  const sealedBuild = (c: Context<AppEnv>, timezone: string, ...live: LivePart[]) => sealedBuildFor(c, deps.sealed, timezone, ...live)
  const resolveWindow = (c: Context<AppEnv>, q: z.infer<typeof WindowQuery>) =>
    resolveRange(q, q.timezone ?? c.get('project').timezone, deps.now(), '7d')

  const metrics = insightsRoute('metrics', 'Visitors, sessions, bounce rate, duration, screen views and revenue, with a series', MetricsQuery, MetricsBody, { headers: { ...RANGE_HEADERS, ...SEALED_HEADERS } })
  app.openapi(metrics, async (c) => {
    const q = c.req.valid('query')
    const range = resolveWindow(c, q)
    const interval = q.interval ?? defaultInterval(range)
    const bucketStarts = metricsBuckets(range, interval)
    const previous = q.previous === 'true' ? previousRange(range) : undefined
    const req = { projectId: c.get('project').id, range, previous, interval, filters: q.filters ?? [] }
    const build = await sealedBuild(c, range.timezone, 'sessions', 'events')
    const statement = build ? await sealedStatementFor(c, deps.sealed, build, (p) => sealedMetricsStatement(req, bucketStarts, build, p)) : metricsStatement(req)
    const rows = await c.get('runner').rows<Parameters<typeof assembleMetrics>[0][number]>(statement, run(c))
    describeRange(c, range)
    return c.json(assembleMetrics(rows, bucketStarts, previous !== undefined), 200)
  })

  const LiveQuery = z.object({ range: ignoredParam(anyText, '/live always counts the last 5 minutes').optional() }).strict()
  const live = insightsRoute('live', 'Distinct visitors with any event in the last 5 minutes', LiveQuery, LiveBody, { headers: RANGE_HEADERS })
  app.openapi(live, async (c) => {
    const now = DateTime.fromJSDate(deps.now(), { zone: 'UTC' })
    const [row] = await c.get('runner').rows<{ visitors: number }>(liveStatement(c.get('project').id, now), run(c))
    // The window counted, [now − 5 min, now], written half-open like every other insights window.
    const local = now.setZone(c.get('project').timezone)
    describeRange(c, { start: local.minus({ minutes: 5 }), end: local.plus({ milliseconds: 1 }), timezone: c.get('project').timezone })
    return c.json({ visitors: row?.visitors ?? 0 }, 200)
  })

  /** The statement that answers a ranked list; it may set headers saying how. */
  type ListStatement = (req: PageRequest, c: Context<AppEnv>) => Statement | Promise<Statement>

  /** A ranked list: one page of rows, and the cursor of the next one in the headers. */
  const rankedList = <Row extends z.ZodType>(
    route: string,
    summary: string,
    row: Row,
    headers: Record<string, { description: string; schema: { type: 'string' } }>,
    statement: ListStatement,
    shape: (row: z.infer<Row>) => z.infer<Row>,
  ) =>
    app.openapi(insightsRoute(route, summary, ListQuery, z.array(row), { headers: { ...RANGE_HEADERS, ...PAGE_HEADERS, ...headers } }), async (c) => {
      const q = c.req.valid('query')
      // The project is part of what a cursor belongs to: one project's window must not page another's ranking.
      const fp = fingerprint(`${c.get('project').id}/${route}`, q)
      const position = pagePosition(q.cursor, q.limit, fp, deps.signingKey)
      const range = position.range ?? resolveWindow(c, q)
      const req = { projectId: c.get('project').id, range, filters: q.filters ?? [], limit: q.limit + 1, offset: position.offset }
      const rows = await c.get('runner').rows<z.infer<Row>>(await statement(req, c), run(c))
      describeRange(c, range)
      if (rows.length > q.limit) {
        const cursor = nextCursor(position.offset + q.limit, range, fp, deps.signingKey)
        const next = new URL(c.req.url)
        next.searchParams.set('cursor', cursor)
        c.header('X-Next-Cursor', cursor)
        c.header('Link', `<${next.toString()}>; rel="next"`)
      }
      return c.json(rows.slice(0, q.limit).map(shape), 200)
    })

  rankedList('pages', 'Top pages by sessions', PageRow, SEALED_HEADERS, async (req, c) => {
    const build = sealedPagesAnswer(req) ? await sealedBuild(c, req.range.timezone, ...sealedPagesLive(req)) : undefined
    return build ? sealedPagesStatement(req, build) : pagesStatement(req)
  }, (row) => row)

  for (const dimension of DIMENSIONS) {
    rankedList(
      dimension.name,
      `Sessions by ${dimension.description.toLowerCase()}`,
      BreakdownRow,
      SEALED_HEADERS,
      async (req, c) => {
        // Unfiltered, its visitors may be counted by their last day, less the live ones seen (sealed_live_seen).
        const build = await sealedBuild(c, req.range.timezone, 'sessions', ...(req.filters.length === 0 ? (['seen'] as const) : []))
        return build ? sealedStatementFor(c, deps.sealed, build, (p) => sealedBreakdownStatement(dimension, req, build, p)) : breakdownStatement(dimension, req)
      },
      (row) => shapeBreakdown(dimension, row),
    )
  }
  return app
}

function shapeBreakdown(dimension: Dimension, row: z.infer<typeof BreakdownRow>) {
  const { prefix, ...rest } = row
  return dimension.prefix ? { ...rest, prefix } : rest
}
