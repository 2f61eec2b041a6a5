/** Engine failures, classified so the HTTP layer can answer 504, 503 or 500 without looking at SQL. */
export class QueryTimeoutError extends Error {}

export class EngineUnavailableError extends Error {}

export class EngineQueryError extends Error {
  constructor(
    message: string,
    readonly clickhouseCode?: string,
  ) {
    super(message)
  }
}

const TIMEOUT_CODES = new Set(['159', '160', '209', '210'])
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'UND_ERR_SOCKET'])

export function classifyEngineError(err: unknown): Error {
  if (err instanceof QueryTimeoutError || err instanceof EngineUnavailableError || err instanceof EngineQueryError) {
    return err
  }
  const e = err as { code?: unknown; message?: unknown; name?: unknown }
  const code = e?.code === undefined ? undefined : String(e.code)
  const message = typeof e?.message === 'string' ? e.message : String(err)
  if ((code && TIMEOUT_CODES.has(code)) || /TIMEOUT_EXCEEDED|Timeout exceeded/.test(message)) {
    return new QueryTimeoutError(message)
  }
  if ((code && NETWORK_CODES.has(code)) || /socket hang up|ECONNREFUSED|ECONNRESET|Timeout error/.test(message)) {
    return new EngineUnavailableError(message)
  }
  return new EngineQueryError(message, code)
}

/** The class a failure is counted under (quarry_engine_errors_total); the gate's refusals are `overloaded`. */
export function errorClass(err: Error): 'timeout' | 'unavailable' | 'query' {
  if (err instanceof QueryTimeoutError) return 'timeout'
  if (err instanceof EngineUnavailableError) return 'unavailable'
  return 'query'
}
