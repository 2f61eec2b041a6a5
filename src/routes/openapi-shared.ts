import { z } from '@hono/zod-openapi'
import { STATUS_CODES } from 'node:http'

export const ErrorBodySchema = z
  .object({
    status: z.number().int(),
    error: z.string().openapi({ description: 'HTTP reason phrase' }),
    code: z.string().openapi({ description: 'Stable snake_case code' }),
    message: z.string(),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    requestId: z.string(),
  })
  .openapi('Error')

/** Either credential scheme opens every API route. */
export const SECURITY: Record<string, string[]>[] = [{ clientId: [], clientSecret: [] }, { basic: [] }]

/** The statuses any API route's handler or its middleware may answer besides 200. */
export const API_ERRORS = [400, 401, 403, 404, 429, 503, 504]

/** Documented error responses, all in the one envelope. */
export function errorResponses(statuses: number[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      { description: STATUS_CODES[status] ?? 'Error', content: { 'application/json': { schema: ErrorBodySchema } } },
    ]),
  )
}

const header = (description: string) => ({ description, schema: { type: 'string' as const } })

export const RANGE_HEADERS = {
  'X-Quarry-Range': header('Resolved window <start>/<end>, ISO 8601 with offsets; the end is exclusive'),
  'X-Quarry-Timezone': header('Timezone the window and buckets were computed in'),
}

export const SEALED_HEADERS = {
  'X-Quarry-Sealed-Until': header('Present when what came before this instant was read from the sealed history (the same numbers, fewer rows read)'),
  'X-Quarry-Live-As-Of': header('Present when the answer is exact for the data as it was a moment before the newest inserts: every insert committed before this instant is counted, later ones may not be (at most QUARRY_LIVE_LAG_MS ago); such an answer is not kept by the response cache'),
}

export const PAGE_HEADERS = {
  'X-Next-Cursor': header('Cursor of the next page; absent on the last page'),
  Link: header('<url>; rel="next" for the next page; absent on the last page'),
}
