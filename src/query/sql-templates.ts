import { readFileSync } from 'node:fs'

const QUERIES_DIR = new URL('../../sql/queries/', import.meta.url)
const cache = new Map<string, string>()

const PARTIAL = /\{\{>\s*(\w+)\s*\}\}/g

/** SQL text with its partials in place; a partial's comment lines stay in its file. */
function expand(text: string, including: readonly string[]): string {
  return text.replace(PARTIAL, (_, partial: string) =>
    load(`_${partial}`, including)
      .split('\n')
      .filter((line) => !line.trimStart().startsWith('--'))
      .join('\n')
      .trim(),
  )
}

function load(name: string, including: readonly string[] = []): string {
  const cached = cache.get(name)
  if (cached !== undefined) return cached
  if (including.includes(name)) throw new Error(`sql/queries/${name}.sql includes itself`)
  const text = expand(readFileSync(new URL(`${name}.sql`, QUERIES_DIR), 'utf8'), [...including, name])
  cache.set(name, text)
  return text
}

function fill(text: string, fragments: Record<string, string>, source: string): string {
  return text.replace(/\{\{(\w+)\}\}/g, (_, slot: string) => {
    const fragment = fragments[slot]
    if (fragment === undefined) throw new Error(`${source}: no fragment for {{${slot}}}`)
    return fragment
  })
}

/**
 * A statement from `sql/queries/<name>.sql`. `{{fragment}}` slots take SQL that code builds
 * from allow-lists (bucket expressions, compiled filters); values stay `{name:Type}` parameters.
 * `{{> part}}` places `sql/queries/_part.sql`, SQL that several statements share word for word.
 */
export function renderSql(name: string, fragments: Record<string, string> = {}): string {
  return fill(load(name), fragments, `sql/queries/${name}.sql`)
}

/** The same for a statement's text from elsewhere: an experiment's variant, or an older version of a file. */
export function renderSqlText(text: string, fragments: Record<string, string> = {}): string {
  return fill(expand(text, []), fragments, 'the statement')
}
