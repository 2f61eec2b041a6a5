import { cors } from 'hono/cors'

/** Response headers a browser client may read: pagination, statistics, limits, ranges. */
export const EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-Next-Cursor',
  'Link',
  'X-Quarry-Range',
  'X-Quarry-Previous-Range',
  'X-Quarry-Timezone',
  'X-Quarry-Stats',
  'X-Quarry-Cache',
  'X-Quarry-Rollup',
  'X-Quarry-Sealed-Until',
  'X-Quarry-Rows',
  'X-Quarry-Size-Estimate',
  'Server-Timing',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'Content-Disposition',
  'ETag',
]

/** Any origin may read the API; credentials travel in headers, never cookies. */
export const apiCors = cors({
  origin: '*',
  allowMethods: ['GET', 'HEAD', 'OPTIONS'],
  allowHeaders: ['openpanel-client-id', 'openpanel-client-secret', 'authorization', 'x-request-id', 'if-none-match'],
  exposeHeaders: EXPOSED_HEADERS,
  maxAge: 86400,
  credentials: false,
})
