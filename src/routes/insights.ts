import { OpenAPIHono, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { DateTime } from 'luxon'
import type { AppEnv } from '../app-env.ts'
import type { Statement } from '../clickhouse/run.ts'
import { DIMENSIONS, type Dimension } from '../query/dimensions.ts'
import { breakdownStatement, liveStatement, metricsStatement, pagesStatement, type PageRequest } from '../query/insights.ts'
import { pagesRollupStatement, type PageRollups } from '../query/page-rollups.ts'
import { fingerprint, nextCursor, pagePosition } from '../query/pagination.ts'
import { readQuery } from './query-reader.ts'
import {
  buckets,
  defaultInterval,
  INTERVALS,
  isoWithOffset,
  MAX_BUCKETS,
  previousRange,
  resolveRange,
  type TimeRange,
} from '../query/time-range.ts'
import { invalidParameters } from '../query/errors.ts'
import { errorResponses, RANGE_HEADERS, PAGE_HEADERS, ROLLUP_HEADERS } from './openapi-shared.ts'
import { FiltersSchema, windowParams } from './params.ts'

export interface InsightsDeps {
  signingKey: Buffer
  now: () => Date
  queryTimeoutS: number
  pageRollups?: PageRollups
}

const WindowQuery = z
  .object({
    ...windowParams('7d'),
    filters: FiltersSchema.optional(),
  })
  .strict()

const ListQuery = WindowQuery.extend({
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  cursor: z.string().max(4096).optional().openapi({ description: 'X-Next-Cursor of the previous page, or a 1-based page number' }),
}).strict()

const MetricsQuery = WindowQuery.extend({
  interval: z.enum(INTERVALS).optional().openapi({ description: 'Bucket size; by default chosen from the span as OpenPanel does' }),
  previous: z.enum(['true', 'false']).optional().openapi({ description: 'Add the totals of the equally long period just before' }),
}).strict()

const ProjectParam = z.object({ projectId: z.string().openapi({ param: { name: 'projectId', in: 'path' } }) })

const MetricValues = z.object({
  unique_visitors: z.number(),
  total_sessions: z.number(),
  bounce_rate: z.number(),
  avg_session_duration: z.number(),
  total_screen_views: z.number(),
  views_per_session: z.number(),
  total_revenue: z.number(),
})
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
const BreakdownRow = z
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

type MetricRow = z.infer<typeof MetricValues> & { period: number; bucket: number; is_total: number }

const METRIC_KEYS = Object.keys(MetricValues.shape) as (keyof z.infer<typeof MetricValues>)[]
const zeroMetrics = () => Object.fromEntries(METRIC_KEYS.map((k) => [k, 0])) as z.infer<typeof MetricValues>
const pickMetrics = (row: MetricRow | undefined) =>
  row ? (Object.fromEntries(METRIC_KEYS.map((k) => [k, row[k]])) as z.infer<typeof MetricValues>) : zeroMetrics()

function describeRange(c: Context<AppEnv>, range: TimeRange) {
  c.header('X-Quarry-Range', `${isoWithOffset(range.start)}/${isoWithOffset(range.end)}`)
  c.header('X-Quarry-Timezone', range.timezone)
}

export function insightsRoutes(deps: InsightsDeps) {
  const app = new OpenAPIHono<AppEnv>()
  const run = { timeoutS: deps.queryTimeoutS }

  const resolveWindow = (c: Context<AppEnv>, q: z.infer<typeof WindowQuery>) =>
    resolveRange(q, q.timezone ?? c.get('project').timezone, deps.now(), '7d')

  const register = (path: string, summary: string, query: z.ZodType, body: z.ZodType, headers: Record<string, unknown>) =>
    app.openAPIRegistry.registerPath({
      method: 'get',
      path: `/insights/{projectId}/${path}`,
      summary,
      tags: ['insights'],
      security: [{ clientId: [], clientSecret: [] }, { basic: [] }],
      request: { params: ProjectParam, query: query as never },
      responses: {
        200: { description: summary, headers: headers as never, content: { 'application/json': { schema: body } } },
        ...errorResponses([400, 401, 403, 404, 429, 503, 504]),
      },
    })

  register('metrics', 'Visitors, sessions, bounce rate, duration, screen views and revenue, with a series', MetricsQuery, MetricsBody, RANGE_HEADERS)
  app.get('/insights/:projectId/metrics', async (c) => {
    const q = readQuery(c.req.url, MetricsQuery, { json: ['filters'] })
    const range = resolveWindow(c, q)
    const interval = q.interval ?? defaultInterval(range)
    const bucketStarts = buckets(range, interval)
    if (bucketStarts.length > MAX_BUCKETS) {
      throw invalidParameters([{ path: 'interval', message: `more than ${MAX_BUCKETS} ${interval} buckets; choose a larger interval` }])
    }
    const previous = q.previous === 'true' ? previousRange(range) : undefined
    const rows = await c.get('runner').rows<MetricRow>(
      metricsStatement({ projectId: c.get('project').id, range, previous, interval, filters: q.filters ?? [] }),
      { ...run, stats: c.get('stats'), signal: c.req.raw.signal },
    )
    const current = rows.filter((r) => r.period === 0)
    const byBucket = new Map(current.filter((r) => r.is_total === 0).map((r) => [r.bucket, r]))
    describeRange(c, range)
    return c.json({
      metrics: pickMetrics(current.find((r) => r.is_total === 1)),
      series: bucketStarts.map((start) => ({ date: isoWithOffset(start), ...pickMetrics(byBucket.get(start.toSeconds())) })),
      ...(previous ? { previous: pickMetrics(rows.find((r) => r.period === 1 && r.is_total === 1)) } : {}),
    })
  })

  register('live', 'Distinct visitors with any event in the last 5 minutes', z.object({}).strict(), LiveBody, RANGE_HEADERS)
  app.get('/insights/:projectId/live', async (c) => {
    readQuery(c.req.url, z.object({}).strict())
    const now = DateTime.fromJSDate(deps.now(), { zone: 'UTC' })
    const [row] = await c.get('runner').rows<{ visitors: number }>(liveStatement(c.get('project').id, now), {
      ...run,
      stats: c.get('stats'),
      signal: c.req.raw.signal,
    })
    // The window counted, [now − 5 min, now], written half-open like every other insights window.
    const local = now.setZone(c.get('project').timezone)
    describeRange(c, { start: local.minus({ minutes: 5 }), end: local.plus({ milliseconds: 1 }), timezone: c.get('project').timezone })
    return c.json({ visitors: row?.visitors ?? 0 })
  })

  /** The statement that answers a ranked list; it may set headers saying how. */
  type ListStatement = (req: PageRequest, c: Context<AppEnv>) => Statement | Promise<Statement>

  /** A ranked list: one page of rows, and the cursor of the next one in the headers. */
  const rankedList = <Row>(route: string, statement: ListStatement, shape: (row: Row) => unknown) =>
    app.get(`/insights/:projectId/${route}`, async (c) => {
      const q = readQuery(c.req.url, ListQuery, { json: ['filters'] })
      // The project is part of what a cursor belongs to: one project's window must not page another's ranking.
      const fp = fingerprint(`${c.get('project').id}/${route}`, q)
      const position = pagePosition(q.cursor, q.limit, fp, deps.signingKey)
      const range = position.range ?? resolveWindow(c, q)
      const req = { projectId: c.get('project').id, range, filters: q.filters ?? [], limit: q.limit + 1, offset: position.offset }
      const rows = await c.get('runner').rows<Row>(await statement(req, c), { ...run, stats: c.get('stats'), signal: c.req.raw.signal })
      describeRange(c, range)
      if (rows.length > q.limit) {
        const cursor = nextCursor(position.offset + q.limit, range, fp, deps.signingKey)
        const next = new URL(c.req.url)
        next.searchParams.set('cursor', cursor)
        c.header('X-Next-Cursor', cursor)
        c.header('Link', `<${next.toString()}>; rel="next"`)
      }
      return c.json(rows.slice(0, q.limit).map(shape))
    })

  register('pages', 'Top pages by sessions', ListQuery, z.array(PageRow), { ...RANGE_HEADERS, ...PAGE_HEADERS, ...ROLLUP_HEADERS })
  rankedList<z.infer<typeof PageRow>>(
    'pages',
    async (req, c) => {
      const rollup = await deps.pageRollups?.forRequest(c.get('project'), req, { signal: c.req.raw.signal, stats: c.get('stats') })
      if (!rollup) return pagesStatement(req)
      c.header('X-Quarry-Rollup', isoWithOffset(rollup.closedAt.setZone(req.range.timezone)))
      return pagesRollupStatement(req, rollup)
    },
    (row) => row,
  )

  for (const dimension of DIMENSIONS) {
    register(dimension.name, `Sessions by ${dimension.description.toLowerCase()}`, ListQuery, z.array(BreakdownRow), {
      ...RANGE_HEADERS,
      ...PAGE_HEADERS,
    })
    rankedList<z.infer<typeof BreakdownRow>>(
      dimension.name,
      (req) => breakdownStatement(dimension, req),
      (row) => shapeBreakdown(dimension, row),
    )
  }
  return app
}

function shapeBreakdown(dimension: Dimension, row: z.infer<typeof BreakdownRow>) {
  const { prefix, ...rest } = row
  return dimension.prefix ? { ...rest, prefix } : rest
}
