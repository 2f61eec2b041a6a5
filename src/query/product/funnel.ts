import type { Statement } from '../../clickhouse/run.ts'
import { compileFilters } from '../filters.ts'
import { windowPlaceholders } from '../insights.ts'
import { renderSql } from '../sql-templates.ts'
import { unitFragments, type UnitRequest } from './window.ts'

export const MIN_STEPS = 2
export const MAX_STEPS = 10
export const MAX_WINDOW_HOURS = 720

export interface FunnelRequest extends UnitRequest {
  steps: readonly string[]
  windowHours: number
}

/** windowFunnel's window: times are in 1/16 ms (sql/queries/insights_funnel.sql says why). */
export const funnelWindow = (hours: number) => hours * 3_600_000 * 16

export function funnelStatement(req: FunnelRequest): Statement {
  const { params, ctx } = windowPlaceholders(req.projectId, req.range)
  Object.assign(params.values, { window: funnelWindow(req.windowHours), steps: [...req.steps] })
  const conditions = req.steps.map((step) => `e.name = ${params.add(step, 'String')}`).join(', ')
  return {
    name: 'insights_funnel',
    sql: renderSql('insights_funnel', {
      ...unitFragments(req.groupBy),
      conditions,
      filters: compileFilters(req.filters, 'pageViews', params, ctx),
    }),
    params: params.values,
  }
}

export interface FunnelStep {
  step: number
  eventName: string
  users: number
  conversionRateFromStart: number
  dropoffPercent: number | null
  isHighestDropoff: boolean
}

const round2 = (x: number) => Math.round(x * 100) / 100
const percent = (part: number, whole: number) => (whole === 0 ? 0 : round2((part / whole) * 100))

/**
 * OpenPanel's funnel body from the units per highest level reached: a step counts every unit that
 * reached it or a later one; drop-off is relative to the step itself.
 */
export function assembleFunnel(rows: readonly { level: number; units: number }[], steps: readonly string[]) {
  const users = steps.map((_, i) => rows.filter((r) => r.level >= i + 1).reduce((sum, r) => sum + Number(r.units), 0))
  const drops = users.map((u, i) => (i + 1 < users.length ? u - users[i + 1]! : 0))
  const highest = Math.max(0, ...drops)
  const highestAt = highest > 0 ? drops.indexOf(highest) : -1
  const body: FunnelStep[] = steps.map((eventName, i) => ({
    step: i + 1,
    eventName,
    users: users[i]!,
    conversionRateFromStart: percent(users[i]!, users[0]!),
    dropoffPercent: i + 1 < steps.length ? percent(drops[i]!, users[i]!) : null,
    isHighestDropoff: i === highestAt,
  }))
  const totalUsers = users[0]!
  const completedUsers = users[users.length - 1]!
  return { steps: body, totalUsers, completedUsers, overallConversionRate: percent(completedUsers, totalUsers) }
}
