import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { AppEnv } from '../app-env.ts'
import { ApiError } from '../http/errors.ts'
import { manageProjectsStatement, shapeProject, type ProjectRow } from '../query/manage.ts'
import { errorResponses, SECURITY } from './openapi-shared.ts'

const Project = z
  .object({
    id: z.string(),
    name: z.string(),
    organizationId: z.string(),
    timezone: z.string().openapi({ description: 'IANA timezone the project\'s ranges resolve in (Quarry\'s own field)' }),
    createdAt: z.string().openapi({ description: 'ISO 8601, UTC' }),
    deleteAt: z.string().nullable().openapi({ description: 'Always null: Quarry does not schedule deletions' }),
  })
  .openapi('Project', { description: "OpenPanel's project object, with the fields Quarry stores" })

const MANAGE_ERRORS = [400, 401, 403, 429]

/** What the shared middleware adds once a client is authenticated (rate limit) and a query ran. */
const HEADERS = Object.fromEntries(
  ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Server-Timing', 'X-Quarry-Stats'].map((name) => [name, { $ref: `#/components/headers/${name}` }]),
)

const withHeaders = (responses: ReturnType<typeof errorResponses>) =>
  Object.fromEntries(Object.entries(responses).map(([status, response]) => [status, { ...response, headers: HEADERS }]))

const listProjects = createRoute({
  method: 'get',
  path: '/manage/projects',
  summary: "The projects of the root client's organization, newest first",
  tags: ['manage'],
  security: SECURITY,
  request: { query: z.object({}).strict() },
  responses: {
    200: { description: 'The projects', headers: HEADERS, content: { 'application/json': { schema: z.object({ data: z.array(Project) }).openapi('ProjectList') } } },
    ...withHeaders(errorResponses(MANAGE_ERRORS)),
  },
})

const getProject = createRoute({
  method: 'get',
  path: '/manage/projects/{id}',
  summary: "One project of the root client's organization",
  tags: ['manage'],
  security: SECURITY,
  request: { params: z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' } }) }), query: z.object({}).strict() },
  responses: {
    200: { description: 'The project', headers: HEADERS, content: { 'application/json': { schema: z.object({ data: Project }).openapi('ProjectOne') } } },
    ...withHeaders(errorResponses([...MANAGE_ERRORS, 404])),
  },
})

/** Read-only: Quarry's projects and clients are managed with its CLI. Root clients only, as in OpenPanel. */
export function manageRoutes(deps: { queryTimeoutS: number }) {
  const projects = async (c: Context<AppEnv>, id: string | null) => {
    const client = c.get('client')
    if (client.type !== 'root') throw new ApiError(403, 'client_type_not_allowed', 'only root clients may call /manage')
    const run = { timeoutS: deps.queryTimeoutS, stats: c.get('stats'), signal: c.req.raw.signal }
    const rows = await c.get('runner').rows<ProjectRow>(manageProjectsStatement(client.organizationId, id), run)
    return rows.map(shapeProject)
  }
  return new OpenAPIHono<AppEnv>()
    .openapi(listProjects, async (c) => c.json({ data: await projects(c, null) }, 200))
    .openapi(getProject, async (c) => {
      const [project] = await projects(c, c.req.valid('param').id)
      if (!project) throw new ApiError(404, 'project_not_found', 'project not found')
      return c.json({ data: project }, 200)
    })
}
