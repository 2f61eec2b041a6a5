/** Every `code` an error body can carry, with its meaning; the README and OpenAPI list these. */
export const ERROR_CODES = {
  invalid_parameters: '400: a parameter is missing, unknown or invalid; `details` lists each one',
  invalid_cursor: '400: the cursor was not issued by Quarry, was altered, or belongs to other parameters',
  project_required: '400: a root client must name the project (`projectId`) on export routes',
  invalid_credentials: '401: no credentials, or an unknown, revoked or wrongly authenticated client',
  client_type_not_allowed: '403: write clients may only ingest; only root clients may call /manage',
  project_forbidden: '403: a read client addressed a project other than its own',
  explain_forbidden: '403: only root clients may use explain=sql',
  not_found: '404: no such route',
  project_not_found: '404: no such project in the root client\'s organization',
  profile_not_found: '404: no stored profile and no event with that profile id in the project',
  group_not_found: '404: no such group in the project (never created, or deleted)',
  method_not_allowed: '405: the route exists for other methods; see `Allow`',
  uri_too_long: '414: the query string exceeds 16 KB',
  rate_limited: '429: too many requests (per client) or failed authentications (per address); see `Retry-After`',
  internal_error: '500: an unexpected failure; the request id finds it in the logs',
  engine_unavailable: '503: ClickHouse is not answering; see `Retry-After`',
  overloaded: '503: too many queries are waiting; see `Retry-After`',
  explorer_unavailable: '503: the explorer page could not be built here (an install without esbuild\'s binary); the API is unaffected',
  query_timeout: '504: the query exceeded its time limit',
} as const

export type ErrorCode = keyof typeof ERROR_CODES
