import { AsyncLocalStorage } from 'node:async_hooks'
import pino, { type DestinationStream, type Logger } from 'pino'
import pretty from 'pino-pretty'

/** Credential headers never reach a log line, whatever logs the request. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["openpanel-client-secret"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["openpanel-client-secret"]',
  'headers.cookie',
  'secret',
]

/** What every log line written while serving a request carries (its id, and its trace when traced). */
export interface LogContext {
  requestId: string
  traceId?: string
}

/**
 * The request a piece of work belongs to, set once per request by the HTTP layer: every logger of
 * createLogger adds it to its lines, so a query's line names its request without a logger being
 * passed down through the layers.
 */
export const logContext = new AsyncLocalStorage<LogContext>()

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      // A copy: pino merges the line's own fields into what this returns.
      mixin: () => {
        const context = logContext.getStore()
        return context ? { ...context } : {}
      },
    },
    destination,
  )
}

/** Human-readable lines for a terminal, JSON lines for everything else (files, pipes, collectors). */
export function logDestination(stream: NodeJS.WriteStream): DestinationStream {
  return stream.isTTY ? pretty({ destination: stream, colorize: true, sync: true }) : stream
}
