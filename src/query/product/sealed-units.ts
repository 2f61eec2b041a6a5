import type { Statement } from '../../clickhouse/run.ts'
import { windowPlaceholders } from '../insights.ts'
import { DAY_MS, onUtcHour, sealedPeriods, type SealedBuild } from '../sealed.ts'
import { renderSql } from '../sql-templates.ts'
import { clickhouseInstant } from '../time-range.ts'
import { funnelWindow, type FunnelRequest } from './funnel.ts'
import type { FromBuild } from './sealed-product.ts'
import { flowPlaceholders, type FlowRequest } from './user-flow.ts'
import type { UnitRequest } from './window.ts'

/**
 * Where a build cuts each profile's events into episodes (sql/schema/030_sealed_person_events.sql):
 * funnels by person with a window up to this long take each episode's level alone.
 */
export const EPISODE_GAP_HOURS = 24

/**
 * An event name's bit in an episode's mask of names (sql/schema/042_sealed_person_masks.sql), as SQL
 * of a name `n`: by its hash, so that a request needs no dictionary of the build; names that share
 * a bit only cost a request episodes it need not have read.
 */
export const NAME_BIT = 'bitShiftLeft(toUInt64(1), sipHash64(n) % 64)'

/**
 * How far before C the held people's snapshot (sql/schema/046_sealed_live_held.sql) keeps their
 * episodes and identified days: a window that starts earlier reads them from the whole window. The
 * write reads the arrays of every granule holding a held episode, so its cost follows the days it
 * keeps (L: 836 ms of CPU with all 90 days).
 */
const HELD_DAYS = 35
const heldFrom = (build: SealedBuild) => build.closedAt.minus({ days: HELD_DAYS })

/**
 * Funnels and the user flow from the sessions' event arrays of the sealed history
 * (sql/schema/021_product_sessions.sql): the same rows as their statements over the events, for
 * any window, merged with the events after C. Not for filters (the arrays hold no attributes);
 * funnels by person from the episodes of each profile's events (030), the user flow per session only.
 * Each function answers undefined for a request it cannot answer, else the statement for a build.
 */
const sealedAnswers = (req: UnitRequest, groupBys: readonly UnitRequest['groupBy'][]) => groupBys.includes(req.groupBy) && req.filters.length === 0

function unitPlaceholders(req: UnitRequest, build: SealedBuild) {
  const { params } = windowPlaceholders(req.projectId, req.range)
  Object.assign(params.values, {
    version: build.version,
    live_from: clickhouseInstant(req.range.start > build.closedAt ? req.range.start : build.closedAt),
    from_ms: req.range.start.toMillis(),
    to_ms: req.range.end.toMillis(),
  })
  return params
}

export function sealedFunnel(req: FunnelRequest): FromBuild {
  if (!sealedAnswers(req, ['session_id', 'profile_id'])) return undefined
  return (build) => {
    const params = unitPlaceholders(req, build)
    const window = funnelWindow(req.windowHours)
    // A step is its name's first index among the steps, as the events statement's times take it.
    const number = (step: string) => req.steps.indexOf(step) + 1
    const names = [...new Set(req.steps)]
    Object.assign(params.values, {
      window,
      funnel: `windowFunnel(${window}, 'strict_increase')`,
      steps: [...req.steps],
      names,
      numbers: names.map(number),
      second: number(req.steps[1]!),
    })
    if (req.groupBy === 'profile_id') {
      // Each rollup row of an hour or a day holds that period's events before C: whole in the window
      // where the window's start is on an hour and its end is too, or at or after C.
      const { start, end } = req.range
      const days = sealedPeriods(start, end, DAY_MS, build.closedAt)
      const grouped = req.windowHours > EPISODE_GAP_HOURS
      const whole = build.personTwofoldLinked
      const snapshot = build.heldStamp !== undefined && !grouped && +start >= +heldFrom(build) && (!whole || +whole.from >= +end || +whole.to < +start)
      Object.assign(params.values, {
        grouped,
        ...(snapshot ? { stamp: build.heldStamp } : {}),
        rollups: onUtcHour(start) && (+end >= +build.closedAt || onUtcHour(end)),
        days_from: clickhouseInstant(days.from),
        days_to: clickhouseInstant(days.to),
      })
      return {
        name: 'insights_funnel_people_sealed',
        sql: renderSql('insights_funnel_people_sealed', {
          conditions: req.steps.map((step) => `arrayMap(x -> x % 16 = ${15 - number(step)}, xs)`).join(', '),
          episode_conditions: req.steps.map((step) => `arrayMap(k -> k = ${number(step)}, ks)`).join(', '),
          name_bit: NAME_BIT,
          held_sources: renderSql(snapshot ? '_funnel_people_held_snapshot' : '_funnel_people_held'),
        }),
        params: params.values,
      }
    }
    return {
      name: 'insights_funnel_sealed',
      sql: renderSql('insights_funnel_sealed', {
        names: ' AND name IN {steps:Array(String)}',
        conditions: req.steps.map((step) => `arrayMap(k -> k = ${number(step)}, ks)`).join(', '),
        events_conditions: req.steps.map((step) => `name = ${params.add(step, 'String')}`).join(', '),
      }),
      params: params.values,
    }
  }
}

export function sealedFlow(req: FlowRequest): FromBuild {
  if (!sealedAnswers(req, ['session_id'])) return undefined
  return (build) => {
    const params = unitPlaceholders(req, build)
    return { name: 'insights_user_flow_sealed', sql: renderSql('insights_user_flow_sealed', flowPlaceholders(req, params, 'name')), params: params.values }
  }
}

/** Writes what the people held by the events after C need, for one state of them (sql/schema/046_sealed_live_held.sql). */
export const sealedLiveHeldWriteStatement = (projectId: string, build: SealedBuild, stamp: number): Statement => ({
  name: 'sealed_live_held_write',
  sql: renderSql('sealed_live_held_write'),
  params: { project: projectId, version: build.version, stamp, closed: clickhouseInstant(build.closedAt), held_from: clickhouseInstant(heldFrom(build)) },
})
