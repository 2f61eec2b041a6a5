import { z } from '@hono/zod-openapi'
import { MAX_ACTIVE_DAYS } from '../query/product/active-users.ts'
import { MAX_STEPS, MAX_WINDOW_HOURS, MIN_STEPS } from '../query/product/funnel.ts'
import { FLOW_MODES } from '../query/product/user-flow.ts'
import { GROUP_BYS } from '../query/product/window.ts'
import { FiltersSchema, windowParams } from './params.ts'
import { jsonParam } from './query-reader.ts'

const eventName = z.string().min(1).max(256)
const stepsMessage = `steps must have between ${MIN_STEPS} and ${MAX_STEPS} items`

/** One event name or several: the key repeated, or a JSON array. */
const names = (max: number, description: string) =>
  jsonParam(z.union([eventName, z.array(eventName).max(max, `at most ${max} names`)]).openapi({ description }))

/** The names a `names` parameter holds, as a list. */
export const nameList = (value: string | string[] | undefined): string[] => (value === undefined ? [] : typeof value === 'string' ? [value] : value)

const filters = jsonParam(FiltersSchema).optional()
const timezoneOnly = { timezone: windowParams('').timezone }
const groupBy = z.enum(GROUP_BYS).default('session_id').openapi({
  description: 'Unit counted: a session, or a person (profile_id; an anonymous device counts as the profile it identified as in the window)',
})

export const FunnelQuery = z
  .object({
    ...windowParams('30d'),
    filters,
    steps: names(MAX_STEPS, `Event names in order, ${MIN_STEPS}–${MAX_STEPS}: the key repeated (steps=a&steps=b) or a JSON array`).refine(
      (v) => nameList(v).length >= MIN_STEPS && nameList(v).length <= MAX_STEPS,
      stepsMessage,
    ),
    windowHours: z.coerce.number().int().min(1).max(MAX_WINDOW_HOURS).default(24).openapi({ description: 'Each unit must complete the steps within this many hours of its first step' }),
    groupBy,
  })
  .strict()

export const RetentionQuery = z
  .object({ ...windowParams('all time'), filters })
  .strict()

export const CohortQuery = z
  .object({ ...windowParams('the 12 weeks before the current one, and the current one'), filters })
  .strict()

export const FlowQuery = z
  .object({
    ...windowParams('30d'),
    filters,
    startEvent: eventName.openapi({ description: 'The event the flows start from (mode=after), end with (before), or run from (between)' }),
    endEvent: eventName.optional().openapi({ description: 'Where the flows end; required with mode=between' }),
    mode: z.enum(FLOW_MODES).default('after'),
    steps: z.coerce.number().int().min(2).max(MAX_STEPS).default(5).openapi({ description: 'Longest path, in events' }),
    include: names(100, 'Only these event names (with the start and end events)').optional(),
    exclude: names(100, 'Leave these event names out (ignored when include is given)').optional(),
    groupBy,
  })
  .strict()
  .refine((q) => q.mode !== 'between' || q.endEvent !== undefined, { path: ['endEvent'], message: 'endEvent is required when mode is "between"' })

export const ActiveUsersQuery = z
  .object({
    ...windowParams('all time'),
    days: z.coerce.number().int().min(1).max(MAX_ACTIVE_DAYS).default(7).openapi({ description: `Rolling window in days, 1–${MAX_ACTIVE_DAYS}` }),
  })
  .strict()

export const EngagementQuery = z.object(timezoneOnly).strict()

const FunnelStep = z.object({
  step: z.number(),
  eventName: z.string(),
  users: z.number(),
  conversionRateFromStart: z.number(),
  dropoffPercent: z.number().nullable(),
  isHighestDropoff: z.boolean(),
})
export const FunnelBody = z
  .object({ steps: z.array(FunnelStep), totalUsers: z.number(), completedUsers: z.number(), overallConversionRate: z.number() })
  .openapi('Funnel')

export const RetentionBody = z
  .array(z.object({ date: z.string(), active_users: z.number(), retained_users: z.number(), retention: z.number() }))
  .openapi('Retention')

export const CohortBody = z
  .array(z.object({ cohort_interval: z.string(), sum: z.number(), values: z.array(z.number()), percentages: z.array(z.number()) }))
  .openapi('RetentionCohort')

export const FlowBody = z
  .object({
    mode: z.enum(FLOW_MODES),
    startEvent: z.string(),
    endEvent: z.string().optional(),
    node_count: z.number(),
    link_count: z.number(),
    nodes: z.array(z.object({ id: z.string(), label: z.string(), nodeColor: z.string(), percentage: z.number(), value: z.number(), step: z.number() })),
    links: z.array(z.object({ source: z.string(), target: z.string(), value: z.number() })),
  })
  .openapi('UserFlow')

export const ActiveUsersBody = z
  .object({ window_days: z.number(), label: z.string(), series: z.array(z.object({ date: z.string(), users: z.number() })) })
  .openapi('ActiveUsers')

export const EngagementBody = z
  .object({
    summary: z.object({
      total_identified_users: z.number(),
      active_last_7_days: z.number(),
      active_8_to_14_days: z.number(),
      active_15_to_30_days: z.number(),
      inactive_31_to_60_days: z.number(),
      churned_60_plus_days: z.number(),
    }),
    distribution: z.array(z.object({ days: z.number(), users: z.number() })),
  })
  .openapi('Engagement')
