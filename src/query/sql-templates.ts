import { readFileSync } from 'node:fs'

const QUERIES_DIR = new URL('../../sql/queries/', import.meta.url)
const cache = new Map<string, string>()

const PARTIAL = /\{\{>\s*(\w+)\s*\}\}/g

/** A file's text with its partials in place; a partial's comment lines stay in its file. */
function load(name: string, including: readonly string[] = []): string {
  const cached = cache.get(name)
  if (cached !== undefined) return cached
  if (including.includes(name)) throw new Error(`sql/queries/${name}.sql includes itself`)
  const text = readFileSync(new URL(`${name}.sql`, QUERIES_DIR), 'utf8').replace(PARTIAL, (_, partial: string) =>
    load(`_${partial}`, [...including, name])
      .split('\n')
      .filter((line) => !line.trimStart().startsWith('--'))
      .join('\n')
      .trim(),
  )
  cache.set(name, text)
  return text
}

/**
 * A statement from `sql/queries/<name>.sql`. `{{fragment}}` slots take SQL that code builds
 * from allow-lists (bucket expressions, compiled filters); values stay `{name:Type}` parameters.
 * `{{> part}}` places `sql/queries/_part.sql`, SQL that several statements share word for word.
 */
export function renderSql(name: string, fragments: Record<string, string> = {}): string {
  return load(name).replace(/\{\{(\w+)\}\}/g, (_, slot: string) => {
    const fragment = fragments[slot]
    if (fragment === undefined) throw new Error(`sql/queries/${name}.sql: no fragment for {{${slot}}}`)
    return fragment
  })
}
