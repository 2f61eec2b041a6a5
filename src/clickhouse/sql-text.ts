/** Pieces of a statement's text that the engine's lanes and the runner read or write alike. */

/** A `{name:Type}` placeholder: its name and its type. */
export const PLACEHOLDER = /\{(\w+):([^{}]+)\}/g

/** Blanks and comments before a statement's first keyword. */
export const LEADING_COMMENTS = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/

/** A string as a quoted literal in ClickHouse's SQL and text formats. */
export const quoted = (v: string) => `'${v.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`
