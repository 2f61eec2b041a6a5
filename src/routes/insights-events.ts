import { OpenAPIHono, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { AppEnv } from '../app-env.ts'
import {
  EVENT_PROPERTY_COLUMNS,
  eventNamesStatement,
  eventPropertiesStatement,
  eventPropertyValuesStatement,
  eventsListStatement,
  EXACT_MATCH_PARAMS,
  exactMatchFilters,
  type ExactMatchParam,
} from '../query/insights-events.ts'
import { resolveRange } from '../query/time-range.ts'
import { insightsRoute } from './insights-route.ts'
import { RANGE_HEADERS } from './openapi-shared.ts'
import { FiltersSchema, rangeHeaders, windowParams } from './params.ts'
import { jsonParam } from './query-reader.ts'

export interface RawInsightsDeps {
  now: () => Date
  queryTimeoutS: number
}

/** The paths this module serves under /insights/{projectId}/. */
export const EVENT_ROUTES = ['events', 'events/names', 'events/properties', 'events/property_values'] as const


const text = z.string().min(1).max(256)

/** OpenPanel's exact-match parameters, one optional string each. */
export const exactMatchParams = <K extends ExactMatchParam>(keys: readonly K[]) =>
  Object.fromEntries(keys.map((k) => [k, text.optional().openapi({ description: `Only rows whose ${EXACT_MATCH_PARAMS[k]} is exactly this` })])) as Record<
    K,
    z.ZodOptional<typeof text>
  >

const EventsQuery = z
  .object({
    ...windowParams('30d'),
    eventNames: jsonParam(z.union([text, z.array(text).min(1).max(100)]))
      .optional()
      .openapi({ description: 'Event name(s): one, the key repeated, or a JSON array' }),
    ...exactMatchParams(Object.keys(EXACT_MATCH_PARAMS) as ExactMatchParam[]),
    properties: jsonParam(z.record(z.string().min(1).max(256), z.string().max(4096)))
      .optional()
      .openapi({ description: 'JSON object {"key":"value",…}: every property equal to its value' }),
    filters: jsonParam(FiltersSchema).optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
  })
  .strict()

/** An events row as stored: OpenPanel's column names and ClickHouse's JSON spelling of each value. */
export const RawEvent = z
  .object({
    id: z.string(),
    name: z.string(),
    device_id: z.string(),
    profile_id: z.string(),
    project_id: z.string(),
    session_id: z.string(),
    groups: z.array(z.string()),
    created_at: z.string().openapi({ description: 'YYYY-MM-DD hh:mm:ss.mmm, UTC' }),
    path: z.string(),
    origin: z.string(),
    duration: z.number(),
    revenue: z.number(),
    properties: z.record(z.string(), z.string()),
    country: z.string(),
    city: z.string(),
    longitude: z.number().nullable(),
    latitude: z.number().nullable(),
    imported_at: z.string().nullable(),
  })
  .catchall(z.unknown())
  .openapi('RawEvent', { description: 'Every column of the events table (the remaining ones are strings)' })

const EventProperties = z
  .object({
    columns: z.array(z.string()),
    properties: z.array(z.object({ property_key: z.string(), event_name: z.string() })),
  })
  .openapi('EventProperties')

const PropertyValues = z.object({ event: z.string(), property: z.string(), values: z.array(z.string()) }).openapi('EventPropertyValues')

export const runOptions = (c: Context<AppEnv>, deps: RawInsightsDeps) => ({
  timeoutS: deps.queryTimeoutS,
  stats: c.get('stats'),
  signal: c.req.raw.signal,
})

/** GET /insights/{projectId}/events[/names|/properties|/property_values]: OpenPanel's event explorer routes. */
export function insightsEventsRoutes(deps: RawInsightsDeps) {
  const app = new OpenAPIHono<AppEnv>()

  app.openapi(
    insightsRoute('events', 'The window\'s events as raw rows, newest first', EventsQuery, z.array(RawEvent), { headers: RANGE_HEADERS }),
    async (c) => {
      const q = c.req.valid('query')
      const project = c.get('project')
      const range = resolveRange(q, q.timezone ?? project.timezone, deps.now(), '30d')
      const exact = exactMatchFilters(q, q.properties)
      const eventNames = q.eventNames === undefined ? [] : typeof q.eventNames === 'string' ? [q.eventNames] : q.eventNames
      const rows = await c.get('runner').rows<z.infer<typeof RawEvent>>(
        eventsListStatement({ projectId: project.id, range, eventNames, exact, filters: q.filters ?? [], limit: q.limit }),
        runOptions(c, deps),
      )
      for (const [name, value] of Object.entries(rangeHeaders(range.start, range.end, range.timezone))) c.header(name, value)
      return c.json(rows, 200)
    },
  )

  app.openapi(
    insightsRoute('events/names', 'The 50 most frequent event names, over all time', z.object({}).strict(), z.array(z.string())),
    async (c) => {
      const rows = await c.get('runner').rows<{ name: string }>(eventNamesStatement(c.get('project').id), runOptions(c, deps))
      return c.json(rows.map((r) => r.name), 200)
    },
  )

  const PropertiesQuery = z.object({ eventName: text.optional().openapi({ description: 'Only the keys of this event name' }) }).strict()
  app.openapi(
    insightsRoute('events/properties', 'Property keys with a value, per event name (at most 500), and the columns', PropertiesQuery, EventProperties),
    async (c) => {
      const q = c.req.valid('query')
      const rows = await c.get('runner').rows<{ property_key: string; event_name: string }>(
        eventPropertiesStatement(c.get('project').id, q.eventName),
        runOptions(c, deps),
      )
      return c.json({ columns: [...EVENT_PROPERTY_COLUMNS], properties: rows }, 200)
    },
  )

  const ValuesQuery = z.object({ eventName: text, propertyKey: text }).strict()
  app.openapi(
    insightsRoute('events/property_values', 'Distinct values of one property of one event name, most recent first (at most 200)', ValuesQuery, PropertyValues),
    async (c) => {
      const q = c.req.valid('query')
      const rows = await c.get('runner').rows<{ value: string }>(
        eventPropertyValuesStatement(c.get('project').id, q.eventName, q.propertyKey),
        runOptions(c, deps),
      )
      return c.json({ event: q.eventName, property: q.propertyKey, values: rows.map((r) => r.value) }, 200)
    },
  )

  return app
}
