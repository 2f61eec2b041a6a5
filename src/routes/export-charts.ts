import { OpenAPIHono, z } from '@hono/zod-openapi'
import type { DateTime } from 'luxon'
import type { AppEnv } from '../app-env.ts'
import { invalidParameters } from '../query/errors.ts'
import {
  chartPreviousRange,
  chartSeriesStatement,
  DEFAULT_BREAKDOWN_SERIES,
  isBreakdownName,
  isPropertyName,
  MAX_BREAKDOWN_SERIES,
  MAX_BREAKDOWNS,
  MAX_SERIES,
  NUMERIC_PROPERTY_COLUMNS,
  PROPERTY_SEGMENTS,
  SEGMENTS,
  type ChartSeriesRow,
  type Segment,
} from '../query/charts.ts'
import { readQuery } from './query-reader.ts'
import { buckets, INTERVALS, isoWithOffset, MAX_BUCKETS, resolveRange } from '../query/time-range.ts'
import { errorResponses, RANGE_HEADERS } from './openapi-shared.ts'
import { FiltersSchema, windowParams } from './params.ts'

export interface ExportChartsDeps {
  now: () => Date
  queryTimeoutS: number
}

const ignored = (what: string) => ({ description: `Ignored; accepted because OpenPanel clients send it (${what})` })

const SeriesItem = z
  .object({
    name: z.string().min(1).max(256).openapi({ description: 'Event name; "*" means every event' }),
    filters: FiltersSchema.optional(),
    // 'group' is accepted by the enum only to be refused with a clear message below.
    segment: z
      .enum([...SEGMENTS, 'group'])
      .default('event')
      .openapi({ description: 'What each bucket counts; default event. group is not supported' }),
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
    if (s.segment === 'group') {
      ctx.addIssue({ code: 'custom', path: ['segment'], message: 'the group segment is not supported' })
    }
    if (PROPERTY_SEGMENTS.has(s.segment as Segment) && s.property === undefined) {
      ctx.addIssue({ code: 'custom', path: ['property'], message: `segment ${s.segment} needs a property` })
    }
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
    name: z.string().min(1).max(256).refine(isBreakdownName, 'expected an events column or properties.<key>'),
    id: z.string().max(256).optional().openapi(ignored('the breakdown id of the dashboard')),
  })
  .strict()

const ChartsQuery = z
  .object({
    projectId: z.string().max(64).optional().openapi({ description: 'Project id; required for root clients' }),
    project_id: z.string().max(64).optional().openapi({ description: 'Alias of projectId (projectId wins)' }),
    series: SeriesList.optional(),
    events: SeriesList.optional().openapi({ description: 'Legacy name of series, read when series is absent' }),
    breakdowns: z
      .array(BreakdownItem)
      .max(MAX_BREAKDOWNS)
      .refine((list) => new Set(list.map((b) => b.name)).size === list.length, 'a breakdown may appear only once')
      .optional()
      .openapi({ description: `JSON array (at most ${MAX_BREAKDOWNS}) of {name}: events columns or properties.<key>` }),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_BREAKDOWN_SERIES)
      .default(DEFAULT_BREAKDOWN_SERIES)
      .openapi({ description: 'Breakdown groups kept per series, the top ones by sum' }),
    interval: z.enum(INTERVALS).default('day').openapi({ description: `Bucket size; at most ${MAX_BUCKETS} buckets` }),
    ...windowParams('30d'),
    previous: z.enum(['true', 'false']).optional().openapi({ description: 'Add the period of equal length just before' }),
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

type Comparison = z.infer<typeof Comparison>
type ChartSeriesOut = z.infer<typeof ChartSeries>

const round = (x: number, decimals: number) => {
  const f = 10 ** decimals
  return (Math.sign(x) * Math.round(Math.abs(x) * f)) / f
}

/** OpenPanel's comparison, with the sign of the change kept. */
function compare(current: number, previous: number): Comparison {
  return {
    value: previous,
    diff: previous === 0 ? null : round(((current - previous) / previous) * 100, 1),
    state: current > previous ? 'positive' : current < previous ? 'negative' : 'neutral',
  }
}

// Formatting only: the bucket values are already aggregated by ClickHouse (one value per bucket,
// zeros where it returned none); these are the sum, mean, min and max of that short list.
function summarize(values: readonly number[]) {
  const sum = values.reduce((a, b) => a + b, 0)
  return {
    sum,
    average: values.length === 0 ? 0 : round(sum / values.length, 2),
    min: values.length === 0 ? 0 : Math.min(...values),
    max: values.length === 0 ? 0 : Math.max(...values),
  }
}

const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '')

const compareNames = (a: readonly string[], b: readonly string[]) => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1
  }
  return a.length - b.length
}

interface Group {
  labels: string[]
  current: Map<number, number>
  previous: Map<number, number>
  profiles: number
  previousProfiles: number
}

/** The breakdown groups of one series' rows; a series without breakdowns always has its one group. */
function groupRows(rows: readonly ChartSeriesRow[], breakdowns: number): Group[] {
  const groups = new Map<string, Group>()
  for (const row of rows) {
    const labels = [row.l0, row.l1, row.l2].slice(0, breakdowns)
    const key = JSON.stringify(labels)
    let group = groups.get(key)
    if (!group) {
      group = { labels, current: new Map(), previous: new Map(), profiles: 0, previousProfiles: 0 }
      groups.set(key, group)
    }
    if (row.is_total === 1) {
      if (row.period === 0) group.profiles = row.profiles
      else group.previousProfiles = row.profiles
    } else {
      ;(row.period === 0 ? group.current : group.previous).set(row.bucket, row.value)
    }
  }
  if (breakdowns === 0 && groups.size === 0) {
    groups.set('[]', { labels: [], current: new Map(), previous: new Map(), profiles: 0, previousProfiles: 0 })
  }
  return [...groups.values()]
}

export function exportChartsRoutes(deps: ExportChartsDeps) {
  const app = new OpenAPIHono<AppEnv>()

  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/export/charts',
    summary: 'Time series of up to 10 event series, with segments, breakdowns and the previous period',
    tags: ['export'],
    security: [{ clientId: [], clientSecret: [] }, { basic: [] }],
    request: { query: ChartsQuery as never },
    responses: {
      200: {
        description: 'The chart',
        headers: {
          ...RANGE_HEADERS,
          'X-Quarry-Previous-Range': {
            description: 'With previous=true: the previous window <start>/<end>, ISO 8601 with offsets; the end is exclusive',
            schema: { type: 'string' as const },
          },
        } as never,
        content: { 'application/json': { schema: ChartBody } },
      },
      ...errorResponses([400, 401, 403, 404, 429, 503, 504]),
    },
  })

  app.get('/export/charts', async (c) => {
    const q = readQuery(c.req.url, ChartsQuery, { json: ['series', 'events', 'breakdowns'] })
    const project = c.get('project')
    const range = resolveRange(q, q.timezone ?? project.timezone, deps.now(), '30d')
    const bucketStarts = buckets(range, q.interval)
    if (bucketStarts.length > MAX_BUCKETS) {
      throw invalidParameters([{ path: 'interval', message: `more than ${MAX_BUCKETS} ${q.interval} buckets; choose a larger interval or a shorter range` }])
    }
    const previous = q.previous === 'true' ? chartPreviousRange(range, q.interval) : undefined
    const previousStarts: DateTime[] = previous ? buckets(previous, q.interval).slice(0, MAX_BUCKETS) : []

    c.header('X-Quarry-Range', `${isoWithOffset(range.start)}/${isoWithOffset(range.end)}`)
    c.header('X-Quarry-Timezone', range.timezone)
    if (previous) c.header('X-Quarry-Previous-Range', `${isoWithOffset(previous.start)}/${isoWithOffset(previous.end)}`)

    const requested = q.series ?? q.events ?? []
    const breakdowns = (q.breakdowns ?? []).map((b) => b.name)
    const results = await Promise.all(
      requested.map((s, i) =>
        c.get('runner').rows<ChartSeriesRow>(
          chartSeriesStatement({
            projectId: project.id,
            range,
            previous,
            interval: q.interval,
            name: s.name,
            filters: s.filters ?? [],
            segment: s.segment as Segment,
            property: s.property,
            breakdowns,
            limit: q.limit,
            path: `${q.series ? 'series' : 'events'}.${i}`,
          }),
          { timeoutS: deps.queryTimeoutS, stats: c.get('stats'), signal: c.req.raw.signal },
        ),
      ),
    )

    const usedIds = new Set<string>()
    const uniqueId = (base: string) => {
      let id = base
      for (let n = 2; usedIds.has(id); n++) id = `${base}-${n}`
      usedIds.add(id)
      return id
    }

    const series: ChartSeriesOut[] = []
    requested.forEach((s, index) => {
      const letter = String.fromCharCode(65 + index)
      const title = requested.length > 1 ? `(${letter}) ${s.name}` : s.name
      for (const group of groupRows(results[index]!, breakdowns.length)) {
        const values = bucketStarts.map((t) => group.current.get(t.toSeconds()) ?? 0)
        const previousValues = previousStarts.map((t) => group.previous.get(t.toSeconds()) ?? 0)
        const totals = summarize(values)
        let metricsPrevious: NonNullable<ChartSeriesOut['metrics']['previous']> | undefined
        if (previous) {
          const before = summarize(previousValues)
          metricsPrevious = {
            sum: compare(totals.sum, before.sum),
            average: compare(totals.average, before.average),
            min: compare(totals.min, before.min),
            max: compare(totals.max, before.max),
            ...(group.profiles > 0 || group.previousProfiles > 0 ? { count: compare(group.profiles, group.previousProfiles) } : {}),
          }
        }
        series.push({
          id: uniqueId([slug(s.name) || 'all', letter, ...group.labels.map(slug)].join('-')),
          names: [title, ...group.labels],
          event: {
            id: letter,
            name: s.name,
            ...(breakdowns.length > 0 ? { breakdowns: Object.fromEntries(breakdowns.map((b, i) => [b, group.labels[i]!])) } : {}),
          },
          data: bucketStarts.map((t, i) => ({
            date: isoWithOffset(t),
            count: values[i]!,
            ...(previous && i < previousValues.length ? { previous: compare(values[i]!, previousValues[i]!) } : {}),
          })),
          metrics: {
            ...totals,
            ...(group.profiles > 0 ? { count: group.profiles } : {}),
            ...(metricsPrevious ? { previous: metricsPrevious } : {}),
          },
        })
      }
    })
    series.sort((a, b) => b.metrics.sum - a.metrics.sum || compareNames(a.names, b.names))

    return c.json({ series, metrics: summarize(series.flatMap((s) => s.data.map((d) => d.count))) })
  })

  return app
}
