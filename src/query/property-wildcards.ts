import type { SqlParams } from './sql-params.ts'

/**
 * OpenPanel's wildcard property names: `properties.items.*.name` or `properties.items[*].name`
 * reach every key the pattern matches (arrays are stored flattened, `items.0.name`,
 * `items.1.name`, …), and a filter on one matches an event when any of those values passes it.
 */
const WILDCARD = /(?:^|\.)\*(?=\.|$)|\[\*\]/

/** The LIKE pattern of a wildcard key: each `*` segment (or `[*]`) any text, everything else literal. */
export function wildcardPattern(key: string): string | undefined {
  if (!WILDCARD.test(key)) return undefined
  return key
    .replace(/\[\*\]/g, '.*')
    .split('.')
    .map((segment) => (segment === '*' ? '%' : segment.replace(/[\\%_]/g, (c) => `\\${c}`)))
    .join('.')
}

/** The name the predicate compares, bound to each matching value in turn. */
export const WILDCARD_VALUE = 'property_value'

/**
 * For a wildcard `properties.<key>`: wraps a predicate on WILDCARD_VALUE into "some key matching
 * the pattern has a value that passes it" (none: no match). The pattern is a query parameter.
 */
export function wildcardProperty(name: string, params: SqlParams): ((sql: string) => string) | undefined {
  if (!name.startsWith('properties.')) return undefined
  const pattern = wildcardPattern(name.slice('properties.'.length))
  if (pattern === undefined) return undefined
  const values = `mapValues(mapExtractKeyLike(properties, ${params.add(pattern, 'String')}))`
  return (sql) => `arrayExists(${WILDCARD_VALUE} -> ${sql}, ${values})`
}
