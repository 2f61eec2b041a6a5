import { z } from '@hono/zod-openapi'
import { STATUS_CODES } from 'node:http'
import { RESPONSE_HEADERS, type ResponseHeader } from '../http/response-headers.ts'

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

type DescribedHeader = { description: string; schema: { type: 'string' } }

/** A response's headers in the API document. */
export type DescribedHeaders = Record<string, DescribedHeader>

/** Response headers as the API document describes them, each in the words of response-headers.ts. */
export function describedHeaders<N extends ResponseHeader>(...names: N[]): Record<N, DescribedHeader> {
  return Object.fromEntries(names.map((name): [N, DescribedHeader] => [name, { description: RESPONSE_HEADERS[name].description, schema: { type: 'string' } }])) as Record<N, DescribedHeader>
}

export const RANGE_HEADERS = describedHeaders('X-Quarry-Range', 'X-Quarry-Timezone')
export const SEALED_HEADERS = describedHeaders('X-Quarry-Sealed-Until', 'X-Quarry-Live-As-Of')
export const PAGE_HEADERS = describedHeaders('X-Next-Cursor', 'Link')
