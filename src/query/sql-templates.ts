import { readFileSync } from 'node:fs'

const QUERIES_DIR = new URL('../../sql/queries/', import.meta.url)
const cache = new Map<string, string>()

/**
 * A statement from `sql/queries/<name>.sql`. `{{fragment}}` slots take SQL that code builds
 * from allow-lists (bucket expressions, compiled filters); values stay `{name:Type}` parameters.
 */
export function renderSql(name: string, fragments: Record<string, string> = {}): string {
  let text = cache.get(name)
  if (text === undefined) {
    text = readFileSync(new URL(`${name}.sql`, QUERIES_DIR), 'utf8')
    cache.set(name, text)
  }
  return text.replace(/\{\{(\w+)\}\}/g, (_, slot: string) => {
    const fragment = fragments[slot]
    if (fragment === undefined) throw new Error(`sql/queries/${name}.sql: no fragment for {{${slot}}}`)
    return fragment
  })
}
