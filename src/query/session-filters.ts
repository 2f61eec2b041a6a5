import { invalidParameters, type ErrorDetail } from './errors.ts'
import type { Filter, FilterContext } from './filters.ts'
import type { SqlParams } from './sql-params.ts'

/**
 * OpenPanel's filters on a session's own figures, which only its /sessions route reads:
 * `session.is_bounce`, `session.performed_event` and the numeric `session.<column>`.
 */
const PREFIX = 'session.'
const NUMERIC = new Set(['screen_view_count', 'event_count', 'duration', 'revenue'])
const COMPARISONS: Readonly<Record<string, string>> = { gt: '>', lt: '<', gte: '>=', lte: '<=' }

export const isSessionFilter = (f: Filter) => f.name.startsWith(PREFIX)

const isNumber = (v: unknown) => (typeof v === 'number' || (typeof v === 'string' && v.trim() !== '')) && Number.isFinite(Number(v))

function condition(f: Filter, path: string, params: SqlParams, ctx: FilterContext, issues: ErrorDetail[]): string | undefined {
  const column = f.name.slice(PREFIX.length)
  const negate = f.operator === 'isNot' ? 'NOT ' : ''
  const equality = f.operator === 'is' || f.operator === 'isNot'
  if (column === 'is_bounce') {
    const values = new Set(f.value.map((v) => String(v).trim()))
    if (!equality || [...values].some((v) => !['true', 'false', '1', '0'].includes(v))) {
      issues.push({ path, message: 'session.is_bounce takes is or isNot with true or false' })
      return undefined
    }
    const bounce = [...values].map((v) => (v === 'true' || v === '1' ? 1 : 0))
    return `${negate}(is_bounce IN ${params.add(bounce, 'Array(UInt8)')})`
  }
  if (column === 'performed_event') {
    if (!equality) {
      issues.push({ path, message: 'session.performed_event takes is or isNot with event names' })
      return undefined
    }
    const names = params.add(f.value.map(String), 'Array(String)')
    return `id ${negate}IN (SELECT session_id FROM events WHERE project_id = ${ctx.project} AND created_at >= ${ctx.from} AND name IN ${names})`
  }
  if (!NUMERIC.has(column)) {
    issues.push({ path: `${path.replace(/\.value$/, '')}.name`, message: `unknown filter name "${f.name}"` })
    return undefined
  }
  if (!f.value.every(isNumber) || (!equality && !(f.operator in COMPARISONS))) {
    issues.push({ path, message: `${f.name} compares numbers: is, isNot, gt, lt, gte or lte with numbers` })
    return undefined
  }
  const numbers = f.value.map(Number)
  if (equality) return `${negate}(toFloat64(${column}) IN ${params.add(numbers, 'Array(Float64)')})`
  return `(${numbers.map((n) => `${column} ${COMPARISONS[f.operator]} ${params.add(n, 'Float64')}`).join(' OR ')})`
}

/**
 * ` AND …` conditions on `sessions` rows for the session.* filters, each with its index in the
 * request's `filters` (an empty value list is no filter, as elsewhere).
 */
export function compileSessionFilters(filters: readonly (readonly [Filter, number])[], params: SqlParams, ctx: FilterContext): string {
  const issues: ErrorDetail[] = []
  const parts: string[] = []
  for (const [f, index] of filters) {
    if (f.value.length === 0) continue
    const sql = condition(f, `filters.${index}.value`, params, ctx, issues)
    if (sql !== undefined) parts.push(sql)
  }
  if (issues.length > 0) throw invalidParameters(issues)
  return parts.map((p) => ` AND ${p}`).join('')
}
