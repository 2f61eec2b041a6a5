/**
 * An imported list of ids (an event's or a profile's `groups`) as the strings it holds: a JSON
 * array (NDJSON, Parquet), its JSON text (Quarry's CSV export) or ClickHouse's text form
 * `['a','b']` (a CSV export of the table). Items are non-empty text, as OpenPanel's ingestion
 * requires; numbers are taken as their text. Nothing, or '', is the empty list.
 */
export function textList(name: string, v: unknown, fail: (name: string, message: string, v: unknown) => never): string[] {
  if (v === undefined || v === null || v === '') return []
  let items: unknown = v
  if (typeof v === 'string') {
    const trimmed = v.trim()
    try {
      items = JSON.parse(trimmed)
    } catch {
      items = trimmed.startsWith('[') ? clickhouseArray(trimmed) : undefined
    }
  }
  if (!Array.isArray(items)) return fail(name, 'expected a list of ids (or its JSON text)', v)
  return items.map((item) => {
    if (typeof item === 'number' && Number.isFinite(item)) return String(item)
    if (typeof item === 'string' && item !== '') return item
    return fail(name, 'expected every item to be non-empty text', v)
  })
}

const ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', '0': '\0' }

/** `['a','b\'c']` → ['a', "b'c"]; undefined when it is not that form. */
function clickhouseArray(s: string): string[] | undefined {
  const out: string[] = []
  let i = 1
  const skip = () => {
    while (s[i] === ' ') i++
  }
  skip()
  if (s[i] === ']') return i === s.length - 1 ? out : undefined
  for (;;) {
    skip()
    if (s[i] !== "'") return undefined
    let value = ''
    for (i++; i < s.length && s[i] !== "'"; i++) {
      if (s[i] === '\\') {
        const next = s[++i] ?? ''
        value += ESCAPES[next] ?? next
      } else value += s[i]
    }
    if (s[i++] !== "'") return undefined
    out.push(value)
    skip()
    if (s[i] === ',') {
      i++
      continue
    }
    return s[i] === ']' && i === s.length - 1 ? out : undefined
  }
}
