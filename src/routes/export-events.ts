import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { DateTime } from 'luxon'
import type { Logger } from 'pino'
import type { AppEnv } from '../app-env.ts'
import { invalidParameters } from '../query/errors.ts'
import {
  exportEventsCountStatement,
  exportEventsPositionStatement,
  exportEventsStatement,
  INCLUDE_GROUPS,
  outputKeys,
  resolveExportWindow,
  resolveIncludes,
  type ExportEventsRequest,
  type ExportWindow,
  type KeysetPosition,
} from '../query/export-events.ts'
import { makeCursor, readCursor } from '../query/events-cursor.ts'
import { EXPORT_FORMAT_NAMES, EXPORT_FORMATS, isStreamed, STREAMED_FORMAT_NAMES, type StreamedFormatName } from '../query/export-formats.ts'
import { fingerprint } from '../query/pagination.ts'
import { jsonParam, querySchema } from './query-reader.ts'
import { API_ERRORS, errorResponses, PAGE_HEADERS, RANGE_HEADERS, SECURITY } from './openapi-shared.ts'
import { headRoute, STREAMED_CONTENT, streamedExport } from './export-streamed.ts'
import { CLAMPED_HEADER_DOC, clampParam, FiltersSchema, rangeHeaders } from './params.ts'
import { noteIgnored } from '../http/ignored.ts'

export interface ExportEventsDeps {
  signingKey: Buffer
  now: () => Date
  /** max_execution_time of a page and its count. */
  queryTimeoutS: number
  /** max_execution_time of a streamed export. */
  exportTimeoutS: number
  logger: Logger
}

export const MAX_LIMIT = 1000
const DEFAULT_LIMIT = 50
const MAX_PAGE = 1_000_000

const eventName = z.string().min(1).max(256)

const ExportEventsQuery = z
  .object({
    projectId: z.string().max(64).optional().openapi({ description: 'Project to export; read clients default to their own' }),
    project_id: z.string().max(64).optional().openapi({ description: 'Alias of projectId (projectId wins)' }),
    event: jsonParam(
      z.union([eventName, z.array(eventName).min(1).max(100)]).openapi({ description: 'Event name(s): one, the key repeated, or a JSON array' }),
    ).optional(),
    start: z.string().max(64).optional().openapi({
      description:
        'YYYY-MM-DD (from the start of that day in the project timezone) or an ISO 8601 date-time (with Z or an offset: ' +
        'that instant; without: project-local). Default: all time (as OpenPanel)',
    }),
    end: z.string().max(64).optional().openapi({
      description: 'YYYY-MM-DD (through the end of that day) or an ISO 8601 date-time (inclusive to the millisecond). Default: now',
    }),
    profileId: z.string().min(1).max(256).optional().openapi({
      description: "The profile's events and the anonymous events of the devices it used",
    }),
    filters: jsonParam(FiltersSchema).optional(),
    includes: jsonParam(
      z
        .union([z.string().max(1024), z.array(z.string().max(1024)).max(50)])
        .openapi({ description: `Comma-separated and/or repeated: ${Object.keys(INCLUDE_GROUPS).join(', ')}` }),
    ).optional(),
    limit: z.coerce.number().int().optional().openapi({
      description: `1–${MAX_LIMIT}, default ${DEFAULT_LIMIT} (format=json); outside, clamped as OpenPanel does and said in X-Quarry-Clamped`,
    }),
    page: z.coerce.number().int().optional().openapi({
      description: `1-based page (OpenPanel compatibility; OFFSET), up to ${MAX_PAGE}; outside, clamped and said in X-Quarry-Clamped. Prefer cursor`,
    }),
    cursor: z.string().max(4096).optional().openapi({ description: 'meta.nextCursor of the previous page' }),
    format: z.enum(EXPORT_FORMAT_NAMES).default('json').openapi({
      description: `json: one page; ${STREAMED_FORMAT_NAMES.join(', ')}: every matching event, streamed`,
    }),
    after: z.string().max(64).optional().openapi({
      description:
        'Resumes a streamed export (explicit start and end needed): the events after this event id in the export order ' +
        '(createdAt DESC, id ASC), so that what a cut download holds plus this equals the whole export',
    }),
  })
  .strict()
type ExportEventsQuery = z.infer<typeof ExportEventsQuery>

const EventObject = z
  .object({
    id: z.string(),
    name: z.string(),
    deviceId: z.string(),
    profileId: z.string(),
    projectId: z.string(),
    sessionId: z.string(),
    createdAt: z.string().openapi({ description: 'ISO 8601, UTC, milliseconds' }),
    path: z.string(),
    origin: z.string(),
    country: z.string(),
    city: z.string(),
    os: z.string(),
    browser: z.string(),
    duration: z.number(),
    groups: z.array(z.string()).openapi({ description: 'Ids of the groups the event belongs to; [] when none' }),
  })
  .catchall(z.unknown())
  .openapi('ExportEvent', { description: 'Plus the fields of `includes`' })

const ExportEventsBody = z
  .object({
    meta: z.object({
      count: z.number().int(),
      totalCount: z.number().int().openapi({ description: 'Events matching the request in the whole (pinned) window' }),
      pages: z.number().int(),
      current: z.number().int(),
      nextCursor: z.string().nullable(),
    }),
    data: z.array(EventObject),
  })
  .openapi('ExportEvents')

const list = (v: string | string[] | undefined): string[] => (v === undefined ? [] : typeof v === 'string' ? [v] : v)

const fileStamp = (t: DateTime) => t.toUTC().toFormat("yyyyLLdd'T'HHmmss'Z'")

/** The resolved window, as every export response states it. */
const windowHeaders = (window: ExportWindow) => rangeHeaders(window.from, window.to, window.timezone)

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const exportEventsRoute = createRoute({
  method: 'get',
  path: '/export/events',
  summary: 'Raw events, newest first: a page as JSON, or every matching event streamed as NDJSON or CSV',
  tags: ['export'],
  security: SECURITY,
  request: { query: querySchema(ExportEventsQuery) },
  responses: {
    200: {
      description:
        `format=json: one page and its meta. format=${STREAMED_FORMAT_NAMES.join('|')}: the whole result as an attachment, in the same order ` +
        '(CSV: a header row; properties, profile and meta as JSON text; null as an empty cell. Parquet and Arrow: the keys of ' +
        'the event objects as typed columns: createdAt and importedAt UTC timestamps (ms), numbers as numbers, properties a ' +
        'map of strings, profile and meta JSON text). HEAD answers the headers with X-Quarry-Rows and X-Quarry-Size-Estimate',
      headers: {
        ...RANGE_HEADERS,
        ...PAGE_HEADERS,
        ...CLAMPED_HEADER_DOC,
      },
      content: {
        'application/json': { schema: ExportEventsBody },
        ...STREAMED_CONTENT,
      },
    },
    ...errorResponses(API_ERRORS),
  },
})

export function exportEventsRoutes(deps: ExportEventsDeps) {
  const app = new OpenAPIHono<AppEnv>()
  app.openAPIRegistry.registerPath(headRoute(exportEventsRoute))

  app.openapi(exportEventsRoute, async (c) => {
    const q = c.req.valid('query')
    const project = c.get('project')
    const includes = resolveIncludes(q.includes)
    noteIgnored(c, includes.ignored.map((name) => `includes.${name}`))
    const events = [...new Set(list(q.event))].sort()
    // What defines the rows (not the page size, the format or how the project was named).
    const fp = fingerprint('export/events', {
      project: project.id,
      event: events,
      start: q.start ?? null,
      end: q.end ?? null,
      profileId: q.profileId ?? null,
      filters: q.filters ?? [],
      includes: includes.names,
    })
    const base = {
      projectId: project.id,
      events,
      profileId: q.profileId,
      filters: q.filters ?? [],
      fields: includes.fields,
    }

    if (isStreamed(q.format)) {
      const misplaced = (['limit', 'page', 'cursor'] as const).filter((k) => q[k] !== undefined)
      if (misplaced.length > 0) {
        throw invalidParameters(
          misplaced.map((k) => ({ path: k, message: `format=${q.format} streams every matching event; ${k} applies to format=json` })),
        )
      }
      const window = resolveExportWindow(q.start, q.end, project.timezone, deps.now())
      const req: ExportEventsRequest = { ...base, window, format: q.format }
      if (q.after !== undefined) req.after = await resumePosition(c, req, q)
      return streamExport(c, q.format, req)
    }
    if (q.after !== undefined) {
      throw invalidParameters([{ path: 'after', message: 'after resumes a streamed export; format=json pages with cursor' }])
    }

    if (q.cursor !== undefined && q.page !== undefined) {
      throw invalidParameters([{ path: 'page', message: 'use either page or cursor' }])
    }
    const limit = clampParam(c, 'limit', q.limit ?? DEFAULT_LIMIT, MAX_LIMIT)
    const position = q.cursor !== undefined ? readCursor(q.cursor, fp, deps.signingKey) : undefined
    const window = position?.window ?? resolveExportWindow(q.start, q.end, project.timezone, deps.now())
    const current = position?.page ?? clampParam(c, 'page', q.page ?? 1, MAX_PAGE)
    const req: ExportEventsRequest = {
      ...base,
      window,
      format: 'json',
      page: { limit: limit + 1, offset: position ? 0 : (current - 1) * limit, after: position?.after },
    }
    const runner = c.get('runner')
    const run = { timeoutS: deps.queryTimeoutS, stats: c.get('stats'), signal: c.req.raw.signal }
    const [rows, counted] = await Promise.all([
      runner.rows<Record<string, unknown> & { createdAt: string; id: string }>(exportEventsStatement(req), run),
      runner.rows<{ total: number }>(exportEventsCountStatement(req), run),
    ])
    const totalCount = Number(counted[0]?.total ?? 0)
    const data = rows.slice(0, limit)
    c.get('metrics')?.exportRows.inc({ format: 'json' }, data.length)
    const last = data[data.length - 1]
    const nextCursor = rows.length > limit && last ? makeCursor(last, window, current + 1, fp, deps.signingKey) : null
    for (const [name, value] of Object.entries(windowHeaders(window))) c.header(name, value)
    if (nextCursor) {
      const next = new URL(c.req.url)
      next.searchParams.delete('page')
      next.searchParams.set('cursor', nextCursor)
      c.header('X-Next-Cursor', nextCursor)
      c.header('Link', `<${next.toString()}>; rel="next"`)
    }
    return c.json({ meta: { count: data.length, totalCount, pages: Math.ceil(totalCount / limit), current, nextCursor }, data }, 200)
  })

  /** Where a resumed stream starts: after the event `after`, which must be one of the export's events. */
  async function resumePosition(c: Context<AppEnv>, req: ExportEventsRequest, q: ExportEventsQuery) {
    const id = q.after!
    if (q.start === undefined || q.end === undefined) {
      throw invalidParameters([{ path: 'after', message: 'after needs explicit start and end: a window that ends now moves between two requests' }])
    }
    if (!UUID.test(id)) throw invalidParameters([{ path: 'after', message: 'expected an event id (a UUID)' }])
    const run = { timeoutS: deps.queryTimeoutS, stats: c.get('stats'), signal: c.req.raw.signal }
    const [position] = await c.get('runner').rows<KeysetPosition>(exportEventsPositionStatement(req, id), run)
    if (!position) {
      throw invalidParameters([{ path: 'after', message: `event ${id} is not one of this export's events (project, window, event names, filters)` }])
    }
    return position
  }

  /** Every matching event, streamed in the format's bytes as ClickHouse writes them (HEAD: counted, not streamed). */
  function streamExport(c: Context<AppEnv>, format: StreamedFormatName, req: ExportEventsRequest) {
    const run = { timeoutS: deps.queryTimeoutS, stats: c.get('stats'), signal: c.req.raw.signal }
    return streamedExport(
      c,
      {
        format,
        statement: exportEventsStatement(req),
        prefix: EXPORT_FORMATS[format].header?.(outputKeys(req.fields)),
        name: `events-${req.projectId}-${fileStamp(req.window.from)}-${fileStamp(req.window.to)}`,
        headers: windowHeaders(req.window),
        timeoutS: deps.exportTimeoutS,
        logger: deps.logger,
      },
      {
        count: async () => Number((await c.get('runner').rows<{ total: number }>(exportEventsCountStatement(req), run))[0]?.total ?? 0),
        sample: (limit) => exportEventsStatement({ ...req, page: { limit, offset: 0, after: req.after } }),
      },
    )
  }

  return app
}
