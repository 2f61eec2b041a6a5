import { filterTarget, type Filter } from './filters.ts'

/** The name of the events /metrics sums revenue over (`name = 'revenue'` in its statements). */
export const REVENUE_EVENT = 'revenue'

/**
 * Whether a filter holds for every event whose event column `column` is `value`, decided here for
 * the string operators whose meaning on one known string is plain (compileFilters' `predicate`
 * holds the engine's). Any other filter, or one on another column, says false: its test is kept.
 * test/filter-holds.test.ts checks each answer against the engine's own.
 */
export function filterHolds(f: Filter, column: string, value: string): boolean {
  const target = filterTarget(f.name)
  if (target?.level !== 'event' || target.column !== column) return false
  const strings = f.value.map(String)
  const contains = strings.some((s) => value.includes(s))
  switch (f.operator) {
    case 'is':
      return strings.includes(value)
    case 'isNot':
      return strings.length > 0 && !strings.includes(value)
    case 'contains':
      return contains
    case 'doesNotContain':
      return strings.length > 0 && !contains
    case 'startsWith':
      return strings.some((s) => value.startsWith(s))
    case 'endsWith':
      return strings.some((s) => value.endsWith(s))
    case 'isNotNull':
      return value !== ''
    default:
      return false
  }
}

/**
 * A session filter asks of a session one matching event: the session of a revenue event passes a
 * filter on the event's name that the name `revenue` itself meets, so such a filter drops out of the
 * test on revenue events (L, 30d, /metrics with `name is revenue`: see benchmarks/README.md).
 */
export const revenueEventFilters = (filters: readonly Filter[]): Filter[] => filters.filter((f) => !filterHolds(f, 'name', REVENUE_EVENT))
