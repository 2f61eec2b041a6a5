import { z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { AppEnv } from '../app-env.ts'
import { Ignored } from '../http/ignored.ts'
import type { ResponseHeader } from '../http/response-headers.ts'
import { isValidTimezone } from '../projects.ts'
import { MAX_FILTERS, MAX_FILTER_VALUES, OPERATORS, type Filter } from '../query/filters.ts'
import type { DateTime } from 'luxon'
import { isoWithOffset, parseBoundary, RANGES } from '../query/time-range.ts'
import { describedHeaders } from './openapi-shared.ts'

/**
 * A parameter OpenPanel accepts and ignores: accepted, changing nothing, and named in
 * X-Quarry-Ignored (http/ignored.ts). `what` says why it can be ignored.
 */
export const ignoredParam = <T extends z.ZodType>(schema: T, what: string) =>
  schema
    .transform((value) => new Ignored(value))
    .openapi({ description: `Accepted and ignored, as OpenPanel does (${what}); named in X-Quarry-Ignored` })

/** Says which out-of-range limit or page was clamped, and to what (CLAMPED_HEADER_DOC). */
export const CLAMPED_HEADER = 'X-Quarry-Clamped' satisfies ResponseHeader

export const CLAMPED_HEADER_DOC = describedHeaders(CLAMPED_HEADER)

/** OpenPanel clamps a limit or page into range instead of refusing it; Quarry does too, and says so. */
export function clampParam(c: Context<AppEnv>, name: string, value: number, max: number): number {
  const clamped = Math.min(max, Math.max(1, value))
  if (clamped !== value) c.header(CLAMPED_HEADER, `${name}=${clamped}`, { append: true })
  return clamped
}

/** What OpenPanel takes for a parameter it ignores: any text, or the key repeated. */
export const anyText = z.union([z.string().max(4096), z.array(z.string().max(4096)).max(100)])

/** OpenPanel's operators over its cohorts, which Quarry does not keep. */
const COHORT_OPERATORS = ['inCohort', 'notInCohort']

export const FilterSchema = z
  .object({
    name: z.string().min(1).max(256),
    operator: z.enum(OPERATORS, {
      error: (issue) => (COHORT_OPERATORS.includes(String(issue.input)) ? 'cohorts are not supported: Quarry keeps no cohorts' : undefined),
    }),
    value: z.array(z.union([z.string().max(4096), z.number(), z.boolean(), z.null()])).max(MAX_FILTER_VALUES),
    id: z.string().optional().openapi({ description: 'Ignored; accepted because OpenPanel clients send it' }),
    type: ignoredParam(
      z.enum(['string', 'number', 'date', 'datetime', 'boolean']),
      'Quarry compares by the column: numbers as numbers, date-times as instants, properties as text, and gt/lt/gte/lte on a property as a number',
    ).optional(),
  })
  .strict()
  .openapi('Filter') satisfies z.ZodType<Filter>

export const FiltersSchema = z
  .array(FilterSchema)
  .max(MAX_FILTERS)
  .openapi({
    description:
      'JSON array of {name, operator, value[]}, URL-encoded, or bracket notation filters[0][name]=…&filters[0][operator]=…&filters[0][value][0]=…. ' +
      'Names: events columns, utm_source|utm_medium|utm_campaign|utm_term|utm_content, properties.<key>, ' +
      'profile.<column>|profile.properties.<key> (the stored profile of the profile_id), has_profile (true|false). Several filters AND; ' +
      'several values OR, except isNot and doesNotContain whose values AND.',
  })

/**
 * A window boundary's spelling, checked with the other parameters so that one 400 names every bad
 * one (the zone it is read in comes later, and moves no boundary from valid to invalid).
 */
const boundary = z
  .string()
  .max(64)
  .refine((text) => parseBoundary(text, 'start', 'UTC') !== undefined, 'expected YYYY-MM-DD or an ISO 8601 date-time')
  .optional()

/** The window parameters insights and chart export share; each route adds its own around them. */
export const windowParams = (defaultRange: string) => ({
  range: z.enum(RANGES).optional().openapi({ description: `Named range in the project timezone; default ${defaultRange}` }),
  startDate: boundary.openapi({ description: 'YYYY-MM-DD (whole day) or ISO 8601 date-time; with Z or an offset it is that instant' }),
  endDate: boundary.openapi({ description: 'YYYY-MM-DD (whole day, inclusive) or ISO 8601 date-time (inclusive)' }),
  timezone: z
    .string()
    .max(64)
    .refine(isValidTimezone, 'must be an IANA timezone name')
    .optional()
    .openapi({ description: "IANA name overriding the project's timezone for this request" }),
})

/** The resolved window as every windowed response states it (RANGE_HEADERS documents them). */
export const rangeHeaders = (start: DateTime, end: DateTime, timezone: string) => ({
  'X-Quarry-Range': `${isoWithOffset(start)}/${isoWithOffset(end)}`,
  'X-Quarry-Timezone': timezone,
})
