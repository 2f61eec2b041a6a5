import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppEnv, AuthenticatedClient } from '../app-env.ts'
import type { QueryRunner } from '../clickhouse/run.ts'
import { ApiError } from '../http/errors.ts'
import { findProject, PROJECT_ID, type Project } from '../projects.ts'
import { SingleFlight } from '../single-flight.ts'
import { TtlCache } from './cache.ts'

export type ProjectLookup = (id: string) => Promise<Project | undefined>

/**
 * Every authorized request reads its project row, so found rows are kept for `ttlMs` and
 * concurrent reads of one project share a query. Misses are not kept: a project created a moment
 * ago must be found, and only authenticated, rate-limited callers get this far.
 */
export function cachedProjectLookup(runner: QueryRunner, ttlMs: number, clock: () => number): ProjectLookup {
  const cache = new TtlCache<Project>(ttlMs, clock)
  const flights = new SingleFlight<Project | undefined>()
  return async (id) => {
    if (!PROJECT_ID.test(id)) return undefined
    return (
      cache.get(id) ??
      flights.run(id, async () => {
        const project = await findProject(runner, id, { timeoutS: 5 })
        if (project) cache.set(id, project)
        return project
      })
    )
  }
}

const forbidden = () => new ApiError(403, 'project_forbidden', 'this client has no access to that project')

/**
 * The access rule. A read client reaches only its own project and never learns whether another
 * exists (403 either way). A root client reaches its organization's projects; anything else is a
 * 404. With no project requested (export only), a client uses its own project if it has one.
 */
export async function resolveProject(
  client: AuthenticatedClient,
  requested: string | undefined,
  lookup: ProjectLookup,
): Promise<Project> {
  const id = requested ?? client.projectId
  if (client.type === 'read') {
    if (client.projectId === null || id !== client.projectId) throw forbidden()
    const project = await lookup(id)
    if (!project) throw forbidden()
    return project
  }
  if (id === null) throw new ApiError(400, 'project_required', 'projectId (or project_id) is required for a root client')
  const project = await lookup(id)
  if (!project || project.organization_id !== client.organizationId) {
    throw new ApiError(404, 'project_not_found', 'project not found')
  }
  return project
}

/** Where a route names its project: /insights/:projectId/… or ?projectId= (else ?project_id=) on /export. */
export type ProjectSource = 'path' | 'query'

function requestedProject(c: Context<AppEnv>, source: ProjectSource): string | undefined {
  // '' rather than undefined, so a path without a project can never fall back to the client's own.
  if (source === 'path') return c.req.param('projectId') ?? ''
  return c.req.query('projectId') || c.req.query('project_id') || undefined
}

/** Leaves the addressed project in `c.get('project')`, or refuses the request. */
export const projectAccess = (source: ProjectSource, lookup: ProjectLookup) =>
  createMiddleware<AppEnv>(async (c, next) => {
    c.set('project', await resolveProject(c.get('client'), requestedProject(c, source), lookup))
    await next()
  })
