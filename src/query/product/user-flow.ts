import type { Statement } from '../../clickhouse/run.ts'
import { compileFilters } from '../filters.ts'
import { windowPlaceholders } from '../insights.ts'
import type { SqlParams } from '../sql-params.ts'
import { renderSql } from '../sql-templates.ts'
import { unitFragments, type UnitRequest } from './window.ts'

export const FLOW_MODES = ['after', 'before', 'between'] as const
export type FlowMode = (typeof FLOW_MODES)[number]

export interface FlowRequest extends UnitRequest {
  startEvent: string
  endEvent?: string
  mode: FlowMode
  steps: number
  include: readonly string[]
  exclude: readonly string[]
}

/**
 * `names` cut at the element before the first name it repeats (the first whose count so far is 2):
 * arrayEnumerateUniq instead of a lambda that looks each name up in its array, which copies the
 * array for every element.
 */
const untilRepeat = (names: string) =>
  `arraySlice(${names}, 1, if((arrayFirstIndex(u -> u > 1, arrayEnumerateUniq(${names})) AS r) = 0, toInt64(length(${names})), toInt64(r) - 1))`

/**
 * Each mode's path over a unit's `names` (OpenPanel's cuts): after, at most `steps` names from the
 * first start event, up to the first repeat; before, the up to `steps` names ending with the first
 * start event; between, the first `steps` names up to the first repeat, from the start event to
 * the end event (units without both in that order have none).
 */
const PATHS: Record<FlowMode, { path: string; keep: string }> = {
  after: { path: untilRepeat('arraySlice(names, indexOf(names, {start:String}), {steps:UInt8})'), keep: 'has(names, {start:String})' },
  before: {
    path: 'arraySlice(names, greatest(1, toInt64(indexOf(names, {start:String})) - {steps:UInt8} + 1), toInt64(least(indexOf(names, {start:String}), {steps:UInt8})))',
    keep: 'has(names, {start:String})',
  },
  between: {
    path:
      `arraySlice((${untilRepeat('arraySlice(names, 1, {steps:UInt8})')} AS cut), (indexOf(cut, {start:String}) AS si), ` +
      'if(si > 0 AND indexOf(cut, {end:String}) > si, toInt64(indexOf(cut, {end:String})) - toInt64(si) + 1, 0))',
    keep: 'has(names, {start:String}) AND has(names, {end:String})',
  },
}

/** The path placeholders of a flow statement, and its include/exclude condition on the event name `column`. */
export function flowPlaceholders(req: FlowRequest, params: SqlParams, column: string) {
  Object.assign(params.values, { start: req.startEvent, end: req.endEvent ?? '', steps: req.steps })
  const names =
    req.include.length > 0
      ? ` AND ${column} IN ${params.add([...req.include, req.startEvent, ...(req.endEvent ? [req.endEvent] : [])], 'Array(String)')}`
      : req.exclude.length > 0
        ? ` AND ${column} NOT IN ${params.add([...req.exclude], 'Array(String)')}`
        : ''
  return { ...PATHS[req.mode], names }
}

export function flowStatement(req: FlowRequest): Statement {
  const { params, ctx } = windowPlaceholders(req.projectId, req.range)
  return {
    name: 'insights_user_flow',
    sql: renderSql('insights_user_flow', {
      ...unitFragments(req.groupBy),
      ...flowPlaceholders(req, params, 'e.name'),
      filters: compileFilters(req.filters, 'pageViews', params, ctx),
    }),
    params: params.values,
  }
}
