import { STATUS_CODES } from 'node:http'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { EngineQueryError, EngineUnavailableError, QueryTimeoutError } from '../clickhouse/errors.ts'
import { OverloadedError } from '../clickhouse/gate.ts'
import { InvalidInput, invalidParameters, type ErrorDetail } from '../query/errors.ts'

/** The one error envelope: every 4xx and 5xx body Quarry sends has this shape. */
export interface ErrorBody {
  status: number
  error: string
  code: string
  message: string
  details?: ErrorDetail[]
  requestId: string
}

export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
  }
}

export function errorBody(err: ApiError, requestId: string): ErrorBody {
  return {
    status: err.status,
    error: STATUS_CODES[err.status] ?? 'Error',
    code: err.code,
    message: err.message,
    ...(err.details ? { details: err.details } : {}),
    requestId,
  }
}

/** Maps anything thrown while answering to the error the client sees; internals stay in the log. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err
  if (err instanceof InvalidInput) return new ApiError(400, err.code, err.message, err.details)
  if (err instanceof OverloadedError) {
    return new ApiError(503, 'overloaded', 'Quarry is busy; retry shortly', undefined, { 'Retry-After': '1' })
  }
  if (err instanceof QueryTimeoutError) {
    return new ApiError(504, 'query_timeout', 'the query took longer than its time limit')
  }
  if (err instanceof EngineUnavailableError) {
    return new ApiError(503, 'engine_unavailable', 'the database is not answering; retry shortly', undefined, {
      'Retry-After': '5',
    })
  }
  if (err instanceof HTTPException) {
    return new ApiError(err.status as ContentfulStatusCode, STATUS_CODES[err.status]?.toLowerCase().replace(/\W+/g, '_') ?? 'error', err.message)
  }
  if (err instanceof EngineQueryError) {
    // A regex filter is the one user value ClickHouse compiles; its syntax errors are the caller's.
    if (err.clickhouseCode === '427') {
      return toApiError(invalidParameters([{ path: 'filters', message: 'a regex filter is not a valid RE2 pattern' }]))
    }
    return new ApiError(500, 'internal_error', 'the query failed')
  }
  return new ApiError(500, 'internal_error', 'an unexpected error occurred')
}
