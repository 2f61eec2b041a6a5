/** One thing wrong with a request, named by where it is (`filters.0.value`) and what is wrong. */
export interface ErrorDetail {
  path: string
  message: string
}

export type InvalidInputCode = 'invalid_parameters' | 'invalid_cursor'

/**
 * A request the domain refuses: parameters it cannot mean anything by, or a cursor it did not
 * issue. The HTTP layer answers it as a 400 with the details; nothing here knows about HTTP.
 */
export class InvalidInput extends Error {
  constructor(
    readonly code: InvalidInputCode,
    message: string,
    readonly details: ErrorDetail[],
  ) {
    super(message)
  }
}

export const invalidParameters = (details: ErrorDetail[]) =>
  new InvalidInput('invalid_parameters', details.map((d) => `${d.path}: ${d.message}`).join('; '), details)

export const invalidCursor = (message: string) => new InvalidInput('invalid_cursor', message, [{ path: 'cursor', message }])
