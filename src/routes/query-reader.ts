import { z } from '@hono/zod-openapi'
import type { ErrorDetail } from '../query/errors.ts'

const BRACKET_FILTER = /^filters\[(\d{1,3})\]\[(name|operator|value|id)\](?:\[(\d{0,3})\])?$/

/** `filters` came both as JSON and in bracket notation: reported by the filters parameter itself. */
class NotationConflict {}

/**
 * What Hono hands a query validator (each key once, a repeated key as an array) made into the
 * object a route's schema validates: `filters[i][field]…` folds into `filters`, and `explain`,
 * which its own middleware answers before any route, is set aside.
 */
function foldQuery(input: unknown): Record<string, unknown> {
  const raw: Record<string, unknown> = {}
  const bracket: Record<string, unknown>[] = []
  for (const [key, value] of Object.entries(input as Record<string, string | string[]>)) {
    if (key === 'explain') continue
    const values = typeof value === 'string' ? [value] : value
    const match = BRACKET_FILTER.exec(key)
    if (!match) {
      raw[key] = value
      continue
    }
    const [, index, field, valueIndex] = match
    const filter = (bracket[Number(index)] ??= {})
    if (field === 'value') {
      const list = (filter.value as string[] | undefined) ?? []
      if (valueIndex !== undefined && valueIndex !== '') list[Number(valueIndex)] = values[0] ?? ''
      else list.push(...values)
      filter.value = list
    } else {
      filter[field!] = values.length === 1 ? values[0] : values
    }
  }
  if (bracket.length > 0) {
    raw.filters =
      'filters' in raw
        ? new NotationConflict()
        : Array.from(bracket, (f) => ({ value: [], ...f, ...(f?.value ? { value: (f.value as unknown[]).filter((v) => v !== undefined) } : {}) }))
  }
  return raw
}

/**
 * A route's query schema: repeated keys arrive as arrays, `filters[i][field]…` folds into
 * `filters`, then `shape` validates, so every problem is reported at once, unknown parameters
 * included (`shape` is strict).
 */
export const querySchema = <S extends z.ZodObject>(shape: S) => z.unknown().transform(foldQuery).pipe(shape)

/** A parameter that may arrive as URL-encoded JSON (OpenPanel clients send arrays that way). */
export const jsonParam = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value: unknown, ctx) => {
    if (value instanceof NotationConflict) {
      ctx.addIssue({ code: 'custom', message: 'use either JSON or bracket notation, not both' })
      return value
    }
    if (typeof value !== 'string') return value
    const text = value.trim()
    if (!text.startsWith('[') && !text.startsWith('{')) return value
    try {
      return JSON.parse(text) as unknown
    } catch {
      ctx.addIssue({ code: 'custom', message: 'is not valid JSON' })
      return value
    }
  }, schema)

/** A validation failure as the envelope's details: one line per problem, one per unknown parameter. */
export function issueDetails(issues: readonly z.core.$ZodIssue[]): ErrorDetail[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: [...issue.path, key].join('.'), message: 'unknown parameter' }))
      : [{ path: issue.path.join('.') || '(query)', message: issue.message }],
  )
}
