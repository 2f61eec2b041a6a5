import { createMiddleware } from 'hono/factory'
import { ApiError } from './errors.ts'

export const MAX_QUERY_STRING_BYTES = 16 * 1024

/** Refuses over-long query strings before anything parses them. */
export const queryStringLimit = createMiddleware(async (c, next) => {
  const url = c.req.url
  const start = url.indexOf('?')
  if (start >= 0 && Buffer.byteLength(url.slice(start + 1)) > MAX_QUERY_STRING_BYTES) {
    throw new ApiError(414, 'uri_too_long', `the query string is longer than ${MAX_QUERY_STRING_BYTES} bytes`)
  }
  await next()
})
