import { createRoute, z } from '@hono/zod-openapi'
import { API_ERRORS, errorResponses, SECURITY, type DescribedHeaders } from './openapi-shared.ts'
import { querySchema } from './query-reader.ts'

export const ProjectParam = z.object({ projectId: z.string().openapi({ param: { name: 'projectId', in: 'path' } }) })

/**
 * GET /insights/{projectId}/<path>: one route of the insights family, its query, its body and the
 * headers its answer carries. `params` adds path parameters beyond the project (a profile, a group).
 */
export const insightsRoute = <Q extends z.ZodObject, B extends z.ZodType, P extends z.ZodObject = typeof ProjectParam>(
  path: string,
  summary: string,
  query: Q,
  body: B,
  opts: { headers?: DescribedHeaders; params?: P } = {},
) =>
  createRoute({
    method: 'get',
    path: `/insights/{projectId}/${path}`,
    summary,
    tags: ['insights'],
    security: SECURITY,
    request: { params: (opts.params ?? ProjectParam) as P, query: querySchema(query) },
    responses: {
      200: { description: summary, ...(opts.headers ? { headers: opts.headers } : {}), content: { 'application/json': { schema: body } } },
      ...errorResponses(API_ERRORS),
    },
  })
