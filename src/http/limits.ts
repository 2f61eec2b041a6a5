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

interface RouteEntry {
  method: string
  path: string
}

/** Methods other routes answer on this path, for a 405's Allow header (none: a plain 404). */
export function allowedMethods(routes: readonly RouteEntry[], path: string): string[] {
  const methods = new Set<string>()
  for (const route of routes) {
    if (route.method === 'ALL' || route.path.includes('*')) continue
    const pattern = new RegExp(`^${route.path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+')}$`)
    if (pattern.test(path)) methods.add(route.method)
  }
  if (methods.has('GET')) methods.add('HEAD')
  return [...methods].sort()
}
