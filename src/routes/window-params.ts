import { z } from '@hono/zod-openapi'
import { isValidTimezone } from '../projects.ts'
import { RANGES } from '../query/time-range.ts'

/** The window parameters insights and chart export share; each route adds its own around them. */
export const windowParams = (defaultRange: string) => ({
  range: z.enum(RANGES).optional().openapi({ description: `Named range in the project timezone; default ${defaultRange}` }),
  startDate: z
    .string()
    .max(64)
    .optional()
    .openapi({ description: 'YYYY-MM-DD (whole day) or ISO 8601 date-time; with Z or an offset it is that instant' }),
  endDate: z
    .string()
    .max(64)
    .optional()
    .openapi({ description: 'YYYY-MM-DD (whole day, inclusive) or ISO 8601 date-time (inclusive)' }),
  timezone: z
    .string()
    .max(64)
    .refine(isValidTimezone, 'must be an IANA timezone name')
    .optional()
    .openapi({ description: "IANA name overriding the project's timezone for this request" }),
})
