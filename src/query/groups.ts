import type { Statement } from '../clickhouse/run.ts'
import { renderSql } from './sql-templates.ts'

/**
 * OpenPanel's groups routes (`/insights/{projectId}/groups`, `/groups/types`, `/groups/{groupId}`):
 * statements over the `groups` table and the member profiles, and the objects they answer with.
 */

export const DEFAULT_GROUP_LIMIT = 20
export const MAX_GROUP_LIMIT = 100
export const DEFAULT_MEMBER_LIMIT = 10
export const MAX_MEMBER_LIMIT = 50

/** A `groups` row; instants are UTC `YYYY-MM-DD hh:mm:ss.mmm`, version the ms epoch of its last write. */
export interface GroupRow {
  id: string
  project_id: string
  type: string
  name: string
  properties: Record<string, string>
  created_at: string
  version: string | number
}

export interface MemberRow {
  id: string
  first_name: string
  last_name: string
  email: string
  avatar: string
  is_external: boolean
  /** Nested at the dots of the stored keys. */
  properties: Record<string, unknown>
  created_at: string
  last_seen_at: string
  groups: string[]
}

export const groupTypesStatement = (projectId: string): Statement => ({
  name: 'groups_types',
  sql: renderSql('groups_types'),
  params: { project: projectId },
})

export const groupListStatement = (projectId: string, q: { type?: string; search?: string; limit: number }): Statement => ({
  name: 'groups_list',
  sql: renderSql('groups_list'),
  params: { project: projectId, type: q.type ?? null, search: q.search ?? null, limit: q.limit },
})

export const groupStatement = (projectId: string, groupId: string): Statement => ({
  name: 'groups_one',
  sql: renderSql('groups_one'),
  params: { project: projectId, group: groupId },
})

export const groupMembersStatement = (projectId: string, groupId: string, memberLimit: number): Statement => ({
  name: 'groups_members',
  sql: renderSql('groups_members'),
  params: { project: projectId, group: groupId, member_limit: memberLimit },
})

const iso = (instant: string) => `${instant.replace(' ', 'T')}Z`

/** OpenPanel's group object: updatedAt is the time of the last write (the row's version). */
export const shapeGroup = (row: GroupRow) => ({
  id: row.id,
  projectId: row.project_id,
  type: row.type,
  name: row.name,
  properties: row.properties,
  createdAt: iso(row.created_at),
  updatedAt: new Date(Number(row.version)).toISOString(),
})

/** A member as OpenPanel's profile service shapes it (camelCase). */
export const shapeMember = (row: MemberRow, projectId: string) => ({
  id: row.id,
  firstName: row.first_name,
  lastName: row.last_name,
  email: row.email,
  avatar: row.avatar,
  isExternal: row.is_external,
  properties: row.properties,
  createdAt: iso(row.created_at),
  lastSeenAt: iso(row.last_seen_at),
  projectId,
  groups: row.groups,
})
