/**
 * The explorer's view, kept in the page's URL (never the credentials): which project, which
 * window, which filters. Parsing and writing it is pure, so a bookmarked URL restores the view.
 */
export interface Filter {
  name: string
  operator: string
  value: string[]
}

export interface View {
  project: string | null
  range: string
  startDate: string | null
  endDate: string | null
  timezone: string | null
  filters: Filter[]
}

export const DEFAULT_RANGE = '30d'

const text = (params: URLSearchParams, name: string) => {
  const value = params.get(name)?.trim()
  return value ? value : null
}

function readFilters(raw: string | null): Filter[] {
  if (!raw) return []
  try {
    const parsed: unknown = JSON.parse(raw)
    if (!Array.isArray(parsed)) return []
    return parsed.flatMap((f): Filter[] => {
      if (typeof f !== 'object' || f === null) return []
      const { name, operator, value } = f as Record<string, unknown>
      if (typeof name !== 'string' || typeof operator !== 'string') return []
      const values = Array.isArray(value) ? value.map(String) : []
      return [{ name, operator, value: values }]
    })
  } catch {
    return []
  }
}

export function readView(search: string): View {
  const params = new URLSearchParams(search)
  return {
    project: text(params, 'project'),
    range: text(params, 'range') ?? DEFAULT_RANGE,
    startDate: text(params, 'startDate'),
    endDate: text(params, 'endDate'),
    timezone: text(params, 'timezone'),
    filters: readFilters(params.get('filters')),
  }
}

/** The window and filters as the insights routes take them. */
export function windowParams(view: View): URLSearchParams {
  const params = new URLSearchParams()
  if (view.startDate && view.endDate) {
    params.set('startDate', view.startDate)
    params.set('endDate', view.endDate)
  } else {
    params.set('range', view.range)
  }
  if (view.timezone) params.set('timezone', view.timezone)
  if (view.filters.length > 0) params.set('filters', JSON.stringify(view.filters))
  return params
}

/** `?project=…&range=…`: what the address bar shows for the view. */
export function writeView(view: View): string {
  const params = new URLSearchParams()
  if (view.project) params.set('project', view.project)
  for (const [name, value] of windowParams(view)) params.set(name, value)
  return `?${params.toString()}`
}

const sameFilter = (a: Filter, b: Filter) =>
  a.name === b.name && a.operator === b.operator && JSON.stringify(a.value) === JSON.stringify(b.value)

export function withFilters(view: View, added: readonly Filter[]): View {
  const fresh = added.filter((f) => !view.filters.some((g) => sameFilter(f, g)))
  return { ...view, filters: [...view.filters, ...fresh] }
}

export function withoutFilter(view: View, index: number): View {
  return { ...view, filters: view.filters.filter((_, i) => i !== index) }
}

export function describeFilter(f: Filter): string {
  const words: Record<string, string> = { is: 'is', isNot: 'is not', contains: 'contains', startsWith: 'starts with' }
  return `${f.name.replace(/_/g, ' ')} ${words[f.operator] ?? f.operator} ${f.value.join(' or ')}`
}
