import type { z } from '@hono/zod-openapi'
import { invalidParameters, type ErrorDetail } from '../query/errors.ts'

const BRACKET_FILTER = /^filters\[(\d{1,3})\]\[(name|operator|value|id)\](?:\[(\d{0,3})\])?$/

export interface ReadQueryOptions {
  /** Parameters that may arrive as URL-encoded JSON (OpenPanel clients send arrays that way). */
  json?: readonly string[]
}

function asJson(raw: unknown, key: string, issues: ErrorDetail[]): unknown {
  if (typeof raw !== 'string') return raw
  const text = raw.trim()
  if (!text.startsWith('[') && !text.startsWith('{')) return raw
  try {
    return JSON.parse(text)
  } catch {
    issues.push({ path: key, message: 'is not valid JSON' })
    return raw
  }
}

/**
 * Turns a URL's query string into the object a route's zod schema validates: repeated keys
 * become arrays, JSON-encoded values are decoded, `filters[i][field]…` folds into `filters`.
 * Every problem is reported at once, unknown parameters included.
 */
export function readQuery<S extends z.ZodType>(url: string, schema: S, opts: ReadQueryOptions = {}): z.output<S> {
  const search = new URL(url).searchParams
  const raw: Record<string, unknown> = {}
  const bracket: Record<string, unknown>[] = []
  const issues: ErrorDetail[] = []

  for (const key of new Set(search.keys())) {
    // explain=sql is checked by its own middleware before any route sees the query.
    if (key === 'explain') continue
    const values = search.getAll(key)
    const match = BRACKET_FILTER.exec(key)
    if (match) {
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
      continue
    }
    raw[key] = values.length === 1 ? values[0] : values
  }

  for (const key of opts.json ?? []) if (key in raw) raw[key] = asJson(raw[key], key, issues)
  if (bracket.length > 0) {
    if ('filters' in raw) issues.push({ path: 'filters', message: 'use either JSON or bracket notation, not both' })
    else raw.filters = Array.from(bracket, (f) => ({ value: [], ...f, ...(f?.value ? { value: (f.value as unknown[]).filter((v) => v !== undefined) } : {}) }))
  }

  const parsed = schema.safeParse(raw)
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) issues.push({ path: [...issue.path, key].join('.'), message: 'unknown parameter' })
      } else {
        issues.push({ path: issue.path.join('.') || '(query)', message: issue.message })
      }
    }
  }
  if (issues.length > 0 || !parsed.success) throw invalidParameters(issues)
  return parsed.data
}
