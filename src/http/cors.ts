import { cors } from 'hono/cors'
import { createMiddleware } from 'hono/factory'
import { RESPONSE_HEADERS } from './response-headers.ts'

/** Response headers a browser client may read: every one Quarry sets for it (response-headers.ts). */
export const EXPOSED_HEADERS = Object.keys(RESPONSE_HEADERS)

/** The request headers a client of the API sends; a preflight may ask for more (below). */
const ALLOWED_HEADERS = ['openpanel-client-id', 'openpanel-client-secret', 'authorization', 'x-request-id', 'if-none-match', 'content-type']

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

const corsAllowing = (headers: readonly string[]) =>
  cors({
    origin: '*',
    allowMethods: ['GET', 'HEAD', 'OPTIONS'],
    allowHeaders: [...headers],
    exposeHeaders: EXPOSED_HEADERS,
    maxAge: 86400,
    credentials: false,
  })

const plain = corsAllowing(ALLOWED_HEADERS)

/**
 * Any origin may read the API; credentials travel in headers, never cookies, so a preflight may
 * ask for any header a browser client adds (content-type, tracing headers) and is allowed it, as
 * OpenPanel's API allows them: refusing one would fail the request before it is sent.
 */
export const apiCors = createMiddleware(async (c, next) => {
  if (c.req.method !== 'OPTIONS') return actual(c, next)
  const requested = (c.req.header('Access-Control-Request-Headers') ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => TOKEN.test(h) && !ALLOWED_HEADERS.includes(h))
  return (requested.length === 0 ? plain : corsAllowing([...ALLOWED_HEADERS, ...new Set(requested)]))(c, next)
})

const EXPOSED = EXPOSED_HEADERS.join(',')

/**
 * An actual request's CORS headers (what cors() sets on one), on the finished response, as the rate
 * limit's are: cors() sets them on `c.res` before the route answers, which makes the route's answer
 * a copy of a web Response, read back through a stream when it is written (the hit path's CPU).
 */
const actual = createMiddleware(async (c, next) => {
  await next()
  const headers = c.res.headers
  headers.set('Access-Control-Allow-Origin', '*')
  headers.set('Access-Control-Expose-Headers', EXPOSED)
})
