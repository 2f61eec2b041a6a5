import { OpenAPIHono, z } from '@hono/zod-openapi'
import { DateTime } from 'luxon'
import type { AppEnv } from '../app-env.ts'
import { ApiError } from '../http/errors.ts'
import { exactMatchFilters } from '../query/insights-events.ts'
import {
  assembleProfileMetrics,
  profileEventsStatement,
  profileMetricsStatement,
  profileSessionsStatement,
  profilesStatement,
  profileStatement,
  PROFILE_PROPERTY_PARAMS,
  sessionsStatement,
  type ProfileMetricsRow,
} from '../query/insights-profiles.ts'
import { resolveRange, timezoneSpelling } from '../query/time-range.ts'
import { exactMatchParams, RawEvent, runOptions, type RawInsightsDeps } from './insights-events.ts'
import { insightsRoute, ProjectParam } from './insights-route.ts'
import { RANGE_HEADERS } from './openapi-shared.ts'
import { FiltersSchema, rangeHeaders, windowParams } from './params.ts'
import { jsonParam } from './query-reader.ts'

/** The paths this module serves under /insights/{projectId}/. */
export const PROFILE_ROUTES = ['profiles', 'profiles/{profileId}', 'profiles/{profileId}/sessions', 'profiles/{profileId}/metrics', 'sessions'] as const

const text = z.string().min(1).max(256)
const limit = z.coerce.number().int().min(1).max(100).default(20)

const profilePropertyParams = Object.fromEntries(
  PROFILE_PROPERTY_PARAMS.map((k) => [k, text.optional().openapi({ description: `Profile property ${k} is exactly this` })]),
) as Record<(typeof PROFILE_PROPERTY_PARAMS)[number], z.ZodOptional<typeof text>>

const ProfilesQuery = z
  .object({
    name: text.optional().openapi({ description: 'Up to 5 words, each found (any case) in the id, email, first or last name' }),
    email: text.optional().openapi({ description: 'Found (any case) in the email' }),
    ...profilePropertyParams,
    inactiveDays: z.coerce.number().int().min(1).max(36_500).optional().openapi({ description: 'No event in the last N×24 hours' }),
    minSessions: z.coerce.number().int().min(1).max(1_000_000).optional().openapi({ description: 'Events in at least N sessions' }),
    performedEvent: text.optional().openapi({ description: 'Has an event of this name (any time)' }),
    filters: jsonParam(FiltersSchema).optional().openapi({ description: 'profile.<column> and profile.properties.<key> filters' }),
    sortOrder: z.enum(['asc', 'desc']).default('desc').openapi({ description: 'By first seen (created_at)' }),
    limit,
  })
  .strict()

/** A stored profile row under OpenPanel's column names. */
const RawProfile = z
  .object({
    id: z.string(),
    first_name: z.string(),
    last_name: z.string(),
    email: z.string(),
    avatar: z.string(),
    properties: z.record(z.string(), z.string()),
    project_id: z.string(),
    is_external: z.boolean(),
    created_at: z.string().openapi({ description: 'First seen, YYYY-MM-DD hh:mm:ss.mmm, UTC' }),
    last_seen_at: z.string(),
    groups: z.array(z.string()),
  })
  .openapi('RawProfile')

/** A session row under OpenPanel's column names. */
const RawSession = z
  .object({
    id: z.string(),
    project_id: z.string(),
    profile_id: z.string(),
    device_id: z.string(),
    groups: z.array(z.string()).openapi({ description: 'The groups of its events' }),
    created_at: z.string(),
    ended_at: z.string(),
    is_bounce: z.boolean(),
    entry_origin: z.string(),
    entry_path: z.string(),
    exit_origin: z.string(),
    exit_path: z.string(),
    screen_view_count: z.number(),
    revenue: z.number(),
    event_count: z.number(),
    duration: z.number().openapi({ description: 'Milliseconds from the first event to the last' }),
    longitude: z.number().nullable(),
    latitude: z.number().nullable(),
  })
  .catchall(z.string())
  .openapi('RawSession', { description: 'Plus the first event\'s attributes as strings (country, region, city, device, …, utm_*, referrer*)' })

const ProfileMetrics = z
  .object({
    profileId: z.string(),
    firstSeen: z.string().nullable(),
    lastSeen: z.string().nullable(),
    sessions: z.number(),
    screenViews: z.number(),
    totalEvents: z.number(),
    conversionEvents: z.number(),
    uniqueDaysActive: z.number(),
    avgSessionDurationMin: z.number().nullable(),
    p90SessionDurationMin: z.number().nullable(),
    avgEventsPerSession: z.number().nullable(),
    avgTimeBetweenSessionsSec: z.number(),
    bounceRate: z.number().nullable(),
    revenue: z.number(),
  })
  .openapi('ProfileMetrics')

const ProfileParams = ProjectParam.extend({ profileId: z.string().max(256).openapi({ param: { name: 'profileId', in: 'path' } }) })

const SessionsQuery = z
  .object({
    ...windowParams('30d'),
    ...exactMatchParams(['country', 'city', 'device', 'browser', 'os', 'referrer', 'referrerName', 'referrerType', 'profileId']),
    filters: jsonParam(FiltersSchema).optional(),
    limit,
  })
  .strict()

/** GET /insights/{projectId}/profiles[/{profileId}[/sessions|/metrics]] and /sessions: OpenPanel's people routes. */
export function insightsProfilesRoutes(deps: RawInsightsDeps) {
  const app = new OpenAPIHono<AppEnv>()

  app.openapi(insightsRoute('profiles', 'Stored profiles, by first seen', ProfilesQuery, z.array(RawProfile)), async (c) => {
    const q = c.req.valid('query')
    const statement = profilesStatement({
      projectId: c.get('project').id,
      name: q.name,
      email: q.email,
      properties: { country: q.country, city: q.city, device: q.device, browser: q.browser },
      inactiveSince: q.inactiveDays === undefined ? undefined : DateTime.fromJSDate(deps.now(), { zone: 'UTC' }).minus({ hours: 24 * q.inactiveDays }),
      minSessions: q.minSessions,
      performedEvent: q.performedEvent,
      filters: q.filters ?? [],
      order: q.sortOrder,
      limit: q.limit,
    })
    return c.json(await c.get('runner').rows<z.infer<typeof RawProfile>>(statement, runOptions(c, deps)), 200)
  })

  const ProfileQuery = z.object({ eventLimit: limit.openapi({ description: 'How many recent events (1–100, default 20)' }) }).strict()
  const ProfileBody = z.object({ profile: RawProfile, recentEvents: z.array(RawEvent) }).openapi('ProfileWithEvents')
  app.openapi(
    insightsRoute('profiles/{profileId}', 'One profile and its latest events; 404 when neither a row nor an event has its id', ProfileQuery, ProfileBody, {
      params: ProfileParams,
    }),
    async (c) => {
      const { profileId } = c.req.valid('param')
      const projectId = c.get('project').id
      const run = runOptions(c, deps)
      const [profiles, recentEvents] = await Promise.all([
        c.get('runner').rows<z.infer<typeof RawProfile>>(profileStatement(projectId, profileId), run),
        c.get('runner').rows<z.infer<typeof RawEvent>>(profileEventsStatement(projectId, profileId, c.req.valid('query').eventLimit), run),
      ])
      const [profile] = profiles
      // A dry run (explain=sql) finds nothing and its body is replaced: no 404 for it.
      if (!profile && !c.get('runner').dryRun) throw new ApiError(404, 'profile_not_found', `profile ${JSON.stringify(profileId)} not found in this project`)
      return c.json({ profile: profile!, recentEvents }, 200)
    },
  )

  app.openapi(
    insightsRoute('profiles/{profileId}/sessions', 'Sessions holding an event of the profile, newest first', z.object({ limit }).strict(), z.array(RawSession), {
      params: ProfileParams,
    }),
    async (c) => {
      const statement = profileSessionsStatement(c.get('project').id, c.req.valid('param').profileId, c.req.valid('query').limit)
      return c.json(await c.get('runner').rows<z.infer<typeof RawSession>>(statement, runOptions(c, deps)), 200)
    },
  )

  app.openapi(
    insightsRoute('profiles/{profileId}/metrics', "The profile's activity over all time", z.object({}).strict(), ProfileMetrics, { params: ProfileParams }),
    async (c) => {
      const { profileId } = c.req.valid('param')
      const project = c.get('project')
      const statement = profileMetricsStatement(project.id, profileId, timezoneSpelling(project.timezone))
      const [row] = await c.get('runner').rows<ProfileMetricsRow>(statement, runOptions(c, deps))
      return c.json(assembleProfileMetrics(profileId, row), 200)
    },
  )

  app.openapi(
    insightsRoute('sessions', 'Sessions begun in the window, newest first', SessionsQuery, z.array(RawSession), { headers: RANGE_HEADERS }),
    async (c) => {
      const q = c.req.valid('query')
      const project = c.get('project')
      const range = resolveRange(q, q.timezone ?? project.timezone, deps.now(), '30d')
      const rows = await c.get('runner').rows<z.infer<typeof RawSession>>(sessionsStatement({ projectId: project.id, range, exact: exactMatchFilters(q), filters: q.filters ?? [], limit: q.limit }), runOptions(c, deps))
      for (const [name, value] of Object.entries(rangeHeaders(range.start, range.end, range.timezone))) c.header(name, value)
      return c.json(rows, 200)
    },
  )

  return app
}
