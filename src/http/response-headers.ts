/**
 * Where the shared middleware, rather than a route, sets a header: on every response (the request
 * id), on every API response (statistics, cache, rate limit), or on a refusal (429, 503).
 */
type SetBy = 'every' | 'api' | 'refusal'

/**
 * Every response header Quarry sets for a client to read, once, with what it says and, for those
 * the shared middleware sets, where (`set`): CORS exposes each (cors.ts), and the API document
 * describes them from here wherever a route or the middleware sets them (routes/openapi-shared.ts,
 * routes/docs.ts).
 */
export const RESPONSE_HEADERS = {
  'X-Request-Id': { description: 'The request id: an incoming X-Request-Id when it is a plain token, otherwise a new one; also in error bodies and logs', set: 'every' },
  'Server-Timing': { description: 'db;dur=<ms in ClickHouse>, total;dur=<ms>; when the request ran a query', set: 'api' },
  'X-Next-Cursor': { description: 'Cursor of the next page; absent on the last page' },
  Link: { description: '<url>; rel="next" for the next page; absent on the last page' },
  'X-Quarry-Range': { description: 'Resolved window <start>/<end>, ISO 8601 with offsets; the end is exclusive' },
  'X-Quarry-Previous-Range': { description: 'With previous=true: the previous window <start>/<end>, ISO 8601 with offsets; the end is exclusive' },
  'X-Quarry-Timezone': { description: 'Timezone the window and buckets were computed in' },
  'X-Quarry-Stats': {
    description:
      '[rows_read=<n>; bytes_read=<n>; ]queries=<n>; when the request ran a query. rows_read and bytes_read on a ClickHouse server only: chDB reports the rows of a result, not those read',
    set: 'api',
  },
  'X-Quarry-Cache': { description: 'hit, miss, coalesced or bypass: what the response cache did (insights and charts, when QUARRY_RESPONSE_CACHE_MB > 0)', set: 'api' },
  'X-Quarry-Ignored': {
    description:
      'Present when the request carried parameters that OpenPanel accepts and ignores (chartType, metric, limit and cursor on /metrics, ' +
      "range on /live, a filter's type, includes naming default fields, a property_* segment without property): their paths, comma-separated " +
      '(e.g. `chartType, series.0.filters.1.type`). They were accepted and changed nothing',
    set: 'api',
  },
  'X-Quarry-Clamped': { description: 'Present when limit or page was out of range: the values used, e.g. `limit=1000` (several: comma-separated)' },
  'X-Quarry-Sealed-Until': { description: 'Present when what came before this instant was read from the sealed history (the same numbers, fewer rows read)' },
  'X-Quarry-Live-As-Of': {
    description:
      'Present when the answer is exact for the data as it was a moment before the newest inserts: every insert committed before this instant is counted, later ones may not be (at most QUARRY_LIVE_LAG_MS ago); such an answer is not kept by the response cache',
  },
  'X-Quarry-Rows': { description: 'The exact number of rows the same GET would stream (events, or chart points)' },
  'X-Quarry-Size-Estimate': { description: 'Estimated bytes of the uncompressed body: the bytes per row of the first rows in the format, times X-Quarry-Rows' },
  'RateLimit-Limit': { description: 'Requests allowed per window for this client; from authentication on', set: 'api' },
  'RateLimit-Remaining': { description: 'Requests left in the current window', set: 'api' },
  'RateLimit-Reset': { description: 'Seconds until the budget is full again', set: 'api' },
  'X-RateLimit-Limit': { description: "RateLimit-Limit under OpenPanel's name", set: 'api' },
  'X-RateLimit-Remaining': { description: "RateLimit-Remaining under OpenPanel's name", set: 'api' },
  'X-RateLimit-Reset': { description: "RateLimit-Reset under OpenPanel's name: seconds, not an instant", set: 'api' },
  'Retry-After': { description: 'Seconds to wait before retrying', set: 'refusal' },
  'Content-Disposition': { description: 'attachment; filename="<name>.<extension of the format>"' },
  ETag: { description: 'The answer\'s tag, with the response cache: the same request with If-None-Match: <tag> is answered 304 while the data under it is unchanged' },
} as const satisfies Record<string, { description: string; set?: SetBy }>

export type ResponseHeader = keyof typeof RESPONSE_HEADERS

/** The headers the shared middleware sets where `where` says (src/routes/docs.ts lists them on each response). */
export const headersSet = (...where: SetBy[]): ResponseHeader[] =>
  (Object.keys(RESPONSE_HEADERS) as ResponseHeader[]).filter((name) => {
    const set = (RESPONSE_HEADERS[name] as { set?: SetBy }).set
    return set !== undefined && where.includes(set)
  })
