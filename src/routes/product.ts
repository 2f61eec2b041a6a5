import { OpenAPIHono, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { AppEnv } from '../app-env.ts'
import type { Statement } from '../clickhouse/run.ts'
import { activeUsersStatement, assembleActiveUsers, sealedActiveUsers, type ActiveUsersRequest, type SeriesStamp } from '../query/product/active-users.ts'
import { assembleFunnel, funnelStatement } from '../query/product/funnel.ts'
import {
  assembleCohorts,
  assembleEngagement,
  assembleRetention,
  cohortColumns,
  cohortStatement,
  defaultCohortRange,
  engagementStatement,
  retentionStatement,
  type CohortRow,
  type RetentionRow,
} from '../query/product/retention.ts'
import { buildSankey, type FlowRow } from '../query/product/sankey.ts'
import { sealedCohort, sealedEngagement, sealedRetention, type FromBuild } from '../query/product/sealed-product.ts'
import { sealedFlow, sealedFunnel } from '../query/product/sealed-units.ts'
import { flowStatement } from '../query/product/user-flow.ts'
import { allTime, productRange, windowGiven, type DefaultWindow } from '../query/product/window.ts'
import { timezoneSpelling, type RangeInput, type TimeRange } from '../query/time-range.ts'
import type { LivePart, SealedHistory } from '../services/sealed/index.ts'
import { insightsRoute } from './insights-route.ts'
import { RANGE_HEADERS, SEALED_HEADERS, type DescribedHeaders } from './openapi-shared.ts'
import { rangeHeaders } from './params.ts'
import {
  ActiveUsersBody,
  ActiveUsersQuery,
  CohortBody,
  CohortQuery,
  EngagementBody,
  EngagementQuery,
  FlowBody,
  FlowQuery,
  FunnelBody,
  FunnelQuery,
  nameList,
  RetentionBody,
  RetentionQuery,
} from './product-schemas.ts'
import { sealedBuildFor } from './sealed-build.ts'

export interface ProductDeps {
  now: () => Date
  queryTimeoutS: number
  sealed?: SealedHistory
}

/** The product routes under /insights/{projectId}/. */
export const PRODUCT_ROUTES = ['funnel', 'retention', 'retention/cohort', 'user_flow', 'active_users', 'engagement'] as const

/** GET /insights/{projectId}/<path> of the product-analytics family (docs: README, Product analytics). */
const productRoute = <Q extends z.ZodObject, B extends z.ZodType>(path: (typeof PRODUCT_ROUTES)[number], summary: string, query: Q, body: B, headers: DescribedHeaders = RANGE_HEADERS) =>
  insightsRoute(path, summary, query, body, { headers })

export function productRoutes(deps: ProductDeps) {
  const app = new OpenAPIHono<AppEnv>()
  const run = (c: Context<AppEnv>) => ({ timeoutS: deps.queryTimeoutS, stats: c.get('stats'), signal: c.req.raw.signal })
  const rows = <T>(c: Context<AppEnv>, statement: Statement) => c.get('runner').rows<T>(statement, run(c))
  /**
   * The sealed history's statement where the request allows one and a build holds, else the one
   * over the events. The routes over profiles read the numbered profiles after C from their snapshot, funnels by
   * person their held people's inputs.
   */
  const statementOf = async (c: Context<AppEnv>, timezone: string, sealed: FromBuild, events: () => Statement, live?: LivePart): Promise<Statement> => {
    const build = sealed ? await sealedBuildFor(c, deps.sealed, timezone, ...(live ? [live] : [])) : undefined
    return build && sealed ? sealed(build) : events()
  }
  const windowOf = (c: Context<AppEnv>, q: RangeInput & { timezone?: string }, fallback: DefaultWindow): TimeRange => {
    const range = productRange(q, q.timezone ?? c.get('project').timezone, deps.now(), fallback)
    for (const [name, value] of Object.entries(rangeHeaders(range.start, range.end, range.timezone))) c.header(name, value)
    return range
  }

  app.openapi(productRoute('funnel', 'Units (sessions or people) completing ordered steps within a window of hours', FunnelQuery, FunnelBody, { ...RANGE_HEADERS, ...SEALED_HEADERS }), async (c) => {
    const q = c.req.valid('query')
    const steps = nameList(q.steps)
    const req = { projectId: c.get('project').id, range: windowOf(c, q, '30d'), filters: q.filters ?? [], groupBy: q.groupBy, steps, windowHours: q.windowHours }
    const statement = await statementOf(c, req.range.timezone, sealedFunnel(req), () => funnelStatement(req), req.groupBy === 'profile_id' ? 'held' : undefined)
    return c.json(assembleFunnel(await rows<{ level: number; units: number }>(c, statement), steps), 200)
  })

  app.openapi(productRoute('retention', 'Identified profiles active per week, and retained into the next', RetentionQuery, RetentionBody, { ...RANGE_HEADERS, ...SEALED_HEADERS }), async (c) => {
    const q = c.req.valid('query')
    const req = { projectId: c.get('project').id, range: windowOf(c, q, allTime), filters: q.filters ?? [] }
    const statement = await statementOf(c, req.range.timezone, sealedRetention(req), () => retentionStatement(req), 'profiles')
    return c.json(assembleRetention(await rows<RetentionRow>(c, statement)), 200)
  })

  app.openapi(productRoute('retention/cohort', 'Weekly cohorts of identified profiles and their retention, with a weighted average', CohortQuery, CohortBody, { ...RANGE_HEADERS, ...SEALED_HEADERS }), async (c) => {
    const q = c.req.valid('query')
    const req = { projectId: c.get('project').id, range: windowOf(c, q, defaultCohortRange), filters: q.filters ?? [] }
    const columns = cohortColumns(req.range)
    const statement = await statementOf(c, req.range.timezone, sealedCohort(req, columns, deps.now()), () => cohortStatement(req, columns), 'profiles')
    const cohorts = await rows<CohortRow>(c, statement)
    return c.json(assembleCohorts(cohorts, columns, deps.now(), req.range.timezone), 200)
  })

  app.openapi(productRoute('user_flow', 'Sankey of the event names after, before or between events', FlowQuery, FlowBody, { ...RANGE_HEADERS, ...SEALED_HEADERS }), async (c) => {
    const q = c.req.valid('query')
    const req = {
      projectId: c.get('project').id,
      range: windowOf(c, q, '30d'),
      filters: q.filters ?? [],
      groupBy: q.groupBy,
      startEvent: q.startEvent,
      endEvent: q.endEvent,
      mode: q.mode,
      steps: q.steps,
      include: nameList(q.include),
      exclude: nameList(q.exclude),
    }
    const statement = await statementOf(c, req.range.timezone, sealedFlow(req), () => flowStatement(req))
    const { nodes, links } = buildSankey(await rows<FlowRow>(c, statement), q.steps)
    const ends = q.endEvent === undefined ? {} : { endEvent: q.endEvent }
    return c.json({ mode: q.mode, startEvent: q.startEvent, ...ends, node_count: nodes.length, link_count: links.length, nodes, links }, 200)
  })

  app.openapi(
    productRoute('active_users', 'Distinct profiles active in the rolling window of `days` ending each day', ActiveUsersQuery, ActiveUsersBody, { ...RANGE_HEADERS, ...SEALED_HEADERS }),
    async (c) => {
      const q = c.req.valid('query')
      const req: ActiveUsersRequest = { projectId: c.get('project').id, range: windowOf(c, q, allTime), days: q.days, allTime: !windowGiven(q) }
      const series: SeriesStamp = (build, { key, write }) => deps.sealed?.ofBuild(req.projectId, build, c.get('runner'), key, write)
      const statement = await statementOf(c, req.range.timezone, sealedActiveUsers(req, series), () => activeUsersStatement(req), 'profiles')
      return c.json(assembleActiveUsers(await rows<{ date: string; users: number }>(c, statement), q.days), 200)
    },
  )

  app.openapi(productRoute('engagement', 'Identified profiles by days since they were last seen', EngagementQuery, EngagementBody, { 'X-Quarry-Timezone': RANGE_HEADERS['X-Quarry-Timezone'], ...SEALED_HEADERS }), async (c) => {
    const q = c.req.valid('query')
    const timezone = timezoneSpelling(q.timezone ?? c.get('project').timezone)
    const req = { projectId: c.get('project').id, timezone, now: deps.now() }
    const statement = await statementOf(c, timezone, sealedEngagement(req.projectId, timezone, req.now), () => engagementStatement(req), 'profiles')
    c.header('X-Quarry-Timezone', timezone)
    return c.json(assembleEngagement(await rows<{ days: number; users: number }>(c, statement)), 200)
  })

  return app
}
