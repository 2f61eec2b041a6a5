import { OpenAPIHono, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { AppEnv } from '../app-env.ts'
import { ApiError } from '../http/errors.ts'
import {
  DEFAULT_GROUP_LIMIT,
  DEFAULT_MEMBER_LIMIT,
  groupListStatement,
  groupMembersStatement,
  groupStatement,
  groupTypesStatement,
  MAX_GROUP_LIMIT,
  MAX_MEMBER_LIMIT,
  shapeGroup,
  shapeMember,
  type GroupRow,
  type MemberRow,
} from '../query/groups.ts'
import { insightsRoute, ProjectParam } from './insights-route.ts'

/** Under /insights/{projectId}/, as OpenPanel names them. */
const PATHS = { types: 'groups/types', list: 'groups', one: 'groups/{groupId}' } as const
export const GROUP_ROUTES: readonly string[] = Object.values(PATHS)


const Group = z
  .object({
    id: z.string(),
    projectId: z.string(),
    type: z.string(),
    name: z.string(),
    properties: z.record(z.string(), z.string()).openapi({ description: 'Flat, dotted keys' }),
    createdAt: z.string().openapi({ description: "ISO 8601, UTC: the group's first write" }),
    updatedAt: z.string().openapi({ description: 'ISO 8601, UTC: its last write' }),
  })
  .openapi('Group')

const Member = z
  .object({
    id: z.string(),
    firstName: z.string(),
    lastName: z.string(),
    email: z.string(),
    avatar: z.string(),
    isExternal: z.boolean(),
    properties: z.record(z.string(), z.unknown()).openapi({ description: 'Nested: a dotted key is an object path' }),
    createdAt: z.string(),
    lastSeenAt: z.string(),
    projectId: z.string(),
    groups: z.array(z.string()),
  })
  .openapi('GroupMember')

const ListQuery = z
  .object({
    type: z.string().min(1).max(256).optional().openapi({ description: 'Only groups of this type' }),
    search: z.string().min(1).max(256).optional().openapi({ description: 'Name or id contains this text (case-insensitive; % and _ are literal)' }),
    limit: z.coerce.number().int().min(1).max(MAX_GROUP_LIMIT).default(DEFAULT_GROUP_LIMIT),
  })
  .strict()

const OneQuery = z
  .object({ memberLimit: z.coerce.number().int().min(1).max(MAX_MEMBER_LIMIT).default(DEFAULT_MEMBER_LIMIT) })
  .strict()

const typesRoute = insightsRoute(PATHS.types, 'The types of the project’s groups', z.object({}).strict(), z.object({ types: z.array(z.string()) }).openapi('GroupTypes'))
const listRoute = insightsRoute(PATHS.list, 'The project’s groups, newest first', ListQuery, z.array(Group))
const oneRoute = insightsRoute(
  PATHS.one,
  'One group and its member profiles, newest first',
  OneQuery,
  z.object({ group: Group, member_count: z.number().int(), members: z.array(Member) }).openapi('GroupWithMembers'),
  { params: ProjectParam.extend({ groupId: z.string().min(1).max(256).openapi({ param: { name: 'groupId', in: 'path' } }) }) },
)

/** OpenPanel's groups routes; `groups/types` is registered first, so it is never a group id. */
export function groupsRoutes(deps: { queryTimeoutS: number }) {
  const run = (c: Context<AppEnv>) => ({ timeoutS: deps.queryTimeoutS, stats: c.get('stats'), signal: c.req.raw.signal })
  return new OpenAPIHono<AppEnv>()
    .openapi(typesRoute, async (c) => {
      const rows = await c.get('runner').rows<{ type: string }>(groupTypesStatement(c.get('project').id), run(c))
      return c.json({ types: rows.map((r) => r.type) }, 200)
    })
    .openapi(listRoute, async (c) => {
      const rows = await c.get('runner').rows<GroupRow>(groupListStatement(c.get('project').id, c.req.valid('query')), run(c))
      return c.json(rows.map(shapeGroup), 200)
    })
    .openapi(oneRoute, async (c) => {
      const project = c.get('project').id
      const { groupId } = c.req.valid('param')
      const { memberLimit } = c.req.valid('query')
      const [[group], members] = await Promise.all([
        c.get('runner').rows<GroupRow & { member_count: string | number }>(groupStatement(project, groupId), run(c)),
        c.get('runner').rows<MemberRow>(groupMembersStatement(project, groupId, memberLimit), run(c)),
      ])
      // explain=sql ran nothing: the statements are its answer (the body is replaced), not a 404.
      if (!group && !c.get('runner').dryRun) throw new ApiError(404, 'group_not_found', `no group "${groupId}" in project ${project}`)
      const shaped = group ? shapeGroup(group) : undefined
      return c.json({ group: shaped!, member_count: Number(group?.member_count ?? 0), members: members.map((m) => shapeMember(m, project)) }, 200)
    })
}
