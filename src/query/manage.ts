import type { Statement } from '../clickhouse/run.ts'
import { renderSql } from './sql-templates.ts'

export interface ProjectRow {
  id: string
  name: string
  organization_id: string
  timezone: string
  /** UTC, `YYYY-MM-DD HH:mm:ss.SSS`. */
  created_at: string
}

/** An organization's projects, or the one with `id` among them. */
export function manageProjectsStatement(organizationId: string, id: string | null = null): Statement {
  return { name: 'manage_projects', sql: renderSql('manage_projects'), params: { organization: organizationId, id } }
}

/** OpenPanel's project object, with the fields Quarry stores (and its timezone). */
export function shapeProject(row: ProjectRow) {
  return {
    id: row.id,
    name: row.name,
    organizationId: row.organization_id,
    timezone: row.timezone,
    createdAt: `${row.created_at.replace(' ', 'T')}Z`,
    // Quarry never schedules a project's deletion.
    deleteAt: null as string | null,
  }
}
