import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi'
import type { Logger } from 'pino'
import type { AppEnv } from '../app-env.ts'
import { assembleChart, assertChartSize, chartBuckets } from '../query/chart-series.ts'
import {
  chartPreviousRange,
  chartSeriesStatement,
  DEFAULT_BREAKDOWN_SERIES,
  isBreakdownName,
  isPropertyName,
  MAX_BREAKDOWN_SERIES,
  MAX_BREAKDOWNS,
  MAX_CHART_POINTS,
  MAX_SERIES,
  NUMERIC_PROPERTY_COLUMNS,
  PROPERTY_SEGMENTS,
  SEGMENTS,
  type ChartSeriesRequest,
  type ChartSeriesRow,
  type Segment,
} from '../query/charts.ts'
import { sealedChartAnswers, sealedChartSeriesStatement } from '../query/sealed-charts.ts'
import { CHART_POINT_KEYS, chartPoints, chartPointsStatement } from '../query/export-chart-points.ts'
import { EXPORT_FORMATS, STREAMED_FORMAT_NAMES } from '../query/export-formats.ts'
import { INTERVALS, isoWithOffset, MAX_BUCKETS, resolveRange } from '../query/time-range.ts'
import { headRoute, STREAMED_CONTENT, streamedExport } from './export-streamed.ts'
import type { SealedHistory } from '../services/sealed/index.ts'
import { API_ERRORS, describedHeaders, errorResponses, RANGE_HEADERS, SEALED_HEADERS, SECURITY } from './openapi-shared.ts'
import { anyText, CLAMPED_HEADER_DOC, clampParam, FiltersSchema, ignoredParam, rangeHeaders, windowParams } from './params.ts'
import { noteIgnored } from '../http/ignored.ts'
import { jsonParam, querySchema } from './query-reader.ts'
import { sealedBuildFor } from './sealed-build.ts'

export interface ExportChartsDeps {
  now: () => Date
  queryTimeoutS: number
  /** The sealed history, whose hourly event rollups answer the series that allow it. */
  sealed?: SealedHistory
  logger: Logger
}

const ignored = (what: string) => ({ description: `Ignored; accepted because OpenPanel clients send it (${what})` })

const SeriesItem = z
  .object({
    name: z.string().min(1).max(256).openapi({ description: 'Event name; "*" means every event' }),
    filters: jsonParam(FiltersSchema).optional(),
    segment: z
      .enum(SEGMENTS)
      .default('event')
      .openapi({ description: 'What each bucket counts; default event; group: distinct group ids among the events. A property_* segment without property counts events, as OpenPanel (named in X-Quarry-Ignored)' }),
    property: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .openapi({ description: `For property_* segments: ${NUMERIC_PROPERTY_COLUMNS.join('|')} or properties.<key>` }),
    id: z.string().max(256).optional().openapi(ignored('the series id of the dashboard')),
    displayName: z.string().max(256).optional().openapi(ignored('OpenPanel strips it from exports too')),
    type: z.literal('event').optional().openapi(ignored('only event series exist here')),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.property !== undefined && !isPropertyName(s.property)) {
      ctx.addIssue({
        code: 'custom',
        path: ['property'],
        message: `expected ${NUMERIC_PROPERTY_COLUMNS.join(', ')} or properties.<key>`,
      })
    }
  })
  .openapi('ChartSeriesRequest')

const SeriesList = z
  .array(SeriesItem)
  .max(MAX_SERIES)
  .openapi({ description: `JSON array (at most ${MAX_SERIES}) of {name, filters?, segment?, property?}` })

const BreakdownItem = z
  .object({
    name: z.string().min(1).max(256).refine(isBreakdownName, 'expected an events column, properties.<key> or group.<name|type|id|properties.<key>>'),
    id: z.string().max(256).optional().openapi(ignored('the breakdown id of the dashboard')),
  })
  .strict()

const ChartsQuery = z
  .object({
    projectId: z.string().max(64).optional().openapi({ description: 'Project id; required for root clients' }),
    project_id: z.string().max(64).optional().openapi({ description: 'Alias of projectId (projectId wins)' }),
    series: jsonParam(SeriesList).optional(),
    events: jsonParam(SeriesList.openapi({ description: 'Legacy name of series, read when series is absent' })).optional(),
    breakdowns: jsonParam(
      z
        .array(BreakdownItem)
        .max(MAX_BREAKDOWNS)
        .refine((list) => new Set(list.map((b) => b.name)).size === list.length, 'a breakdown may appear only once')
        .openapi({ description: `JSON array (at most ${MAX_BREAKDOWNS}) of {name}: events columns, properties.<key> or group.* (an event counts in each of its groups)` }),
    ).optional(),
    limit: z.coerce
      .number()
      .int()
      .default(DEFAULT_BREAKDOWN_SERIES)
      .openapi({
        description: `Breakdown groups kept per series, the top ones by sum: 1–${MAX_BREAKDOWN_SERIES}; outside, clamped (OpenPanel ignores it) and said in X-Quarry-Clamped. A chart holds at most ${MAX_CHART_POINTS} points (groups × buckets over its series); more is a 400 naming limit`,
      }),
    interval: z.enum(INTERVALS).default('day').openapi({ description: `Bucket size; at most ${MAX_BUCKETS} buckets` }),
    ...windowParams('30d'),
    previous: z.enum(['true', 'false']).optional().openapi({ description: 'Add the period of equal length just before' }),
    chartType: ignoredParam(anyText, "the dashboard's drawing of the series").optional(),
    metric: ignoredParam(anyText, "the dashboard's summary figure; every figure is in metrics").optional(),
    format: z.enum(['json', ...STREAMED_FORMAT_NAMES]).default('json').openapi({
      description:
        `json: the chart; ${STREAMED_FORMAT_NAMES.join(', ')}: one row per series point (seriesId, event, breakdowns, date, ` +
        'count, previous) as an attachment',
    }),
  })
  .strict()

const Comparison = z
  .object({
    value: z.number().openapi({ description: 'The value in the previous period' }),
    diff: z.number().nullable().openapi({ description: 'Percent change, 1 decimal; negative when it went down; null when the previous value is 0' }),
    state: z.enum(['positive', 'negative', 'neutral']),
  })
  .openapi('ChartComparison')
const Totals = { sum: z.number(), average: z.number().openapi({ description: 'Mean over every bucket, zeros included; 2 decimals' }), min: z.number(), max: z.number() }
const ChartSeries = z
  .object({
    id: z.string().openapi({ description: 'Unique within the response; not a stable identifier' }),
    names: z.array(z.string()).openapi({ description: 'Series name ("(A) " prefixed when several series were asked for), then the breakdown values' }),
    event: z.object({ id: z.string(), name: z.string(), breakdowns: z.record(z.string(), z.string()).optional() }),
    data: z.array(z.object({ date: z.string().openapi({ description: "Bucket start, ISO 8601 with the offset in force" }), count: z.number(), previous: Comparison.optional() })),
    metrics: z.object({
      ...Totals,
      count: z.number().optional().openapi({ description: 'Distinct profiles over the whole range; absent when 0' }),
      previous: z
        .object({ sum: Comparison, average: Comparison, min: Comparison, max: Comparison, count: Comparison.optional() })
        .optional(),
    }),
  })
  .openapi('ChartSeries')
const ChartBody = z.object({ series: z.array(ChartSeries), metrics: z.object(Totals) }).openapi('Chart')

const chartsRoute = createRoute({
  method: 'get',
  path: '/export/charts',
  summary: 'Time series of up to 10 event series, with segments, breakdowns and the previous period',
  tags: ['export'],
  security: SECURITY,
  request: { query: querySchema(ChartsQuery) },
  responses: {
    200: {
      description:
        'format=json: the chart. Other formats: one row per series point, series by series, buckets in time order: seriesId, ' +
        'event, breakdowns (breakdown name → value; JSON text in CSV, a map in Parquet and Arrow), date (the bucket start: ' +
        'ISO 8601 with the offset in CSV and NDJSON, a UTC timestamp in Parquet and Arrow), count, previous (the previous ' +
        "period's value of the bucket; null without previous=true). HEAD answers the headers with X-Quarry-Rows",
      headers: {
        ...RANGE_HEADERS,
        ...SEALED_HEADERS,
        ...CLAMPED_HEADER_DOC,
        ...describedHeaders('X-Quarry-Previous-Range'),
      },
      content: { 'application/json': { schema: ChartBody }, ...STREAMED_CONTENT },
    },
    ...errorResponses(API_ERRORS),
  },
})

export function exportChartsRoutes(deps: ExportChartsDeps) {
  const app = new OpenAPIHono<AppEnv>()
  app.openAPIRegistry.registerPath(headRoute(chartsRoute))
  return app.openapi(chartsRoute, async (c) => {
    const q = c.req.valid('query')
    const project = c.get('project')
    const range = resolveRange(q, q.timezone ?? project.timezone, deps.now(), '30d')
    const bucketStarts = chartBuckets(range, q.interval)
    const previous = q.previous === 'true' ? chartPreviousRange(range, q.interval) : undefined

    for (const [name, value] of Object.entries(rangeHeaders(range.start, range.end, range.timezone))) c.header(name, value)
    if (previous) c.header('X-Quarry-Previous-Range', `${isoWithOffset(previous.start)}/${isoWithOffset(previous.end)}`)

    const requested = q.series ?? q.events ?? []
    const breakdowns = (q.breakdowns ?? []).map((b) => b.name)
    const limit = clampParam(c, 'limit', q.limit, MAX_BREAKDOWN_SERIES)
    const listName = q.series ? 'series' : 'events'
    // As OpenPanel: a property segment without a property counts events.
    const countsInstead = (s: (typeof requested)[number]) => PROPERTY_SEGMENTS.has(s.segment as Segment) && s.property === undefined
    noteIgnored(c, requested.flatMap((s, i) => (countsInstead(s) ? [`${listName}.${i}.segment`] : [])))
    const series: ChartSeriesRequest[] = requested.map((s, i) => ({
      projectId: project.id,
      range,
      previous,
      interval: q.interval,
      name: s.name,
      filters: s.filters ?? [],
      segment: countsInstead(s) ? 'event' : (s.segment as Segment),
      property: s.property,
      breakdowns,
      limit,
      path: `${listName}.${i}`,
    }))
    const statements = series.map(chartSeriesStatement)
    const allBuckets = previous ? [...chartBuckets(previous, q.interval), ...bucketStarts] : bucketStarts
    const sealable = series.map((s) => sealedChartAnswers(s, allBuckets))
    const build = sealable.some(Boolean) ? await sealedBuildFor(c, deps.sealed, range.timezone, 'events') : undefined
    const rows = await Promise.all(
      series.map((s, i) =>
        c.get('runner').rows<ChartSeriesRow>(build && sealable[i] ? sealedChartSeriesStatement(s, allBuckets, build) : statements[i]!, {
          timeoutS: deps.queryTimeoutS,
          stats: c.get('stats'),
          signal: c.req.raw.signal,
        }),
      ),
    )
    assertChartSize(rows, bucketStarts.length)
    const chart = assembleChart({ bucketStarts, previous, interval: q.interval, names: requested.map((s) => s.name), breakdowns, rows })
    if (q.format === 'json') return c.json(chart, 200)
    const points = chartPoints(chart)
    const format = q.format
    const stamp = (t: typeof range.start) => t.toUTC().toFormat("yyyyLLdd'T'HHmmss'Z'")
    return streamedExport(
      c,
      {
        format,
        statement: chartPointsStatement(points, format),
        prefix: EXPORT_FORMATS[format].header?.(CHART_POINT_KEYS),
        name: `chart-${project.id}-${stamp(range.start)}-${stamp(range.end)}`,
        headers: {},
        timeoutS: deps.queryTimeoutS,
        logger: deps.logger,
      },
      { count: async () => points.length, sample: (limit) => chartPointsStatement(points, format, limit) },
    )
  })
}
