import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../app-env.ts'

/**
 * A parameter OpenPanel accepts and ignores, accepted here too (routes/ignored-params.ts wraps its
 * schema): the validated query holds it as this, so that what was ignored is found by walking it.
 */
export class Ignored {
  constructor(readonly value: unknown) {}
}

export const IGNORED_HEADER = 'X-Quarry-Ignored'

function collect(value: unknown, path: string, into: string[]) {
  if (value instanceof Ignored) into.push(path)
  else if (Array.isArray(value)) value.forEach((item, i) => collect(item, `${path}.${i}`, into))
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) collect(item, path ? `${path}.${key}` : key, into)
  }
}

/**
 * Names in `X-Quarry-Ignored` what the request carried that changed nothing: the validated query's
 * Ignored values, and what the handler noted in `ignored`. Registered inside the response cache,
 * so a cached answer keeps the header.
 */
export const reportIgnored = createMiddleware<AppEnv>(async (c, next) => {
  await next()
  const names = [...(c.get('ignored') ?? [])]
  collect(c.req.valid('query' as never), '', names)
  if (names.length > 0) c.header(IGNORED_HEADER, [...new Set(names)].join(', '))
})

/** What a handler ignored beyond the query's Ignored values (an include naming a default field). */
export function noteIgnored(c: { get: (key: 'ignored') => string[] | undefined; set: (key: 'ignored', value: string[]) => void }, names: readonly string[]) {
  if (names.length > 0) c.set('ignored', [...(c.get('ignored') ?? []), ...names])
}
