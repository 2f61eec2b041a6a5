/**
 * Every response header Quarry sets for a client to read, once, with what it says: CORS exposes
 * each (cors.ts), and the API document describes them from here wherever a route or the shared
 * middleware sets them (routes/openapi-shared.ts).
 */
export const RESPONSE_HEADERS = {
  'X-Request-Id': 'The request id: an incoming X-Request-Id when it is a plain token, otherwise a new one; also in error bodies and logs',
  'X-Next-Cursor': 'Cursor of the next page; absent on the last page',
  Link: '<url>; rel="next" for the next page; absent on the last page',
  'X-Quarry-Range': 'Resolved window <start>/<end>, ISO 8601 with offsets; the end is exclusive',
  'X-Quarry-Previous-Range': 'With previous=true: the previous window <start>/<end>, ISO 8601 with offsets; the end is exclusive',
  'X-Quarry-Timezone': 'Timezone the window and buckets were computed in',
  'X-Quarry-Stats':
    '[rows_read=<n>; bytes_read=<n>; ]queries=<n>; when the request ran a query. rows_read and bytes_read on a ClickHouse server only: chDB reports the rows of a result, not those read',
  'X-Quarry-Cache': 'hit, miss, coalesced or bypass: what the response cache did (insights and charts, when QUARRY_RESPONSE_CACHE_MB > 0)',
  'X-Quarry-Ignored':
    'Present when the request carried parameters that OpenPanel accepts and ignores (chartType, metric, limit and cursor on /metrics, ' +
    "range on /live, a filter's type, includes naming default fields, a property_* segment without property): their paths, comma-separated " +
    '(e.g. `chartType, series.0.filters.1.type`). They were accepted and changed nothing',
  'X-Quarry-Clamped': 'Present when limit or page was out of range: the values used, e.g. `limit=1000` (several: comma-separated)',
  'X-Quarry-Sealed-Until': 'Present when what came before this instant was read from the sealed history (the same numbers, fewer rows read)',
  'X-Quarry-Live-As-Of':
    'Present when the answer is exact for the data as it was a moment before the newest inserts: every insert committed before this instant is counted, later ones may not be (at most QUARRY_LIVE_LAG_MS ago); such an answer is not kept by the response cache',
  'X-Quarry-Rows': 'The exact number of rows the same GET would stream (events, or chart points)',
  'X-Quarry-Size-Estimate': 'Estimated bytes of the uncompressed body: the bytes per row of the first rows in the format, times X-Quarry-Rows',
  'Server-Timing': 'db;dur=<ms in ClickHouse>, total;dur=<ms>; when the request ran a query',
  'RateLimit-Limit': 'Requests allowed per window for this client; from authentication on',
  'RateLimit-Remaining': 'Requests left in the current window',
  'RateLimit-Reset': 'Seconds until the budget is full again',
  'X-RateLimit-Limit': "RateLimit-Limit under OpenPanel's name",
  'X-RateLimit-Remaining': "RateLimit-Remaining under OpenPanel's name",
  'X-RateLimit-Reset': "RateLimit-Reset under OpenPanel's name: seconds, not an instant",
  'Retry-After': 'Seconds to wait before retrying',
  'Content-Disposition': 'attachment; filename="<name>.<extension of the format>"',
  ETag: 'The answer\'s tag, with the response cache: the same request with If-None-Match: <tag> is answered 304 while the data under it is unchanged',
} as const satisfies Record<string, string>

export type ResponseHeader = keyof typeof RESPONSE_HEADERS
