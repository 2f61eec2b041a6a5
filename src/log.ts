import pino, { type DestinationStream, type Logger } from 'pino'

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

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({ level, base: undefined, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, destination)
}
