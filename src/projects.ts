import type { QueryRunner } from './clickhouse/run.ts'

export interface Project {
  id: string
  organization_id: string
  name: string
  timezone: string
  created_at: string
}

export const PROJECT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/

export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz })
    return true
  } catch {
    return false
  }
}


export async function findProject(runner: QueryRunner, id: string, opts = { timeoutS: 10 }): Promise<Project | undefined> {
  const rows = await runner.rows<Project>(
    {
      name: 'project_by_id',
      sql: 'SELECT id, organization_id, name, timezone, created_at FROM projects FINAL WHERE id = {id:String}',
      params: { id },
    },
    opts,
  )
  return rows[0]
}

export async function listProjects(runner: QueryRunner): Promise<Project[]> {
  return runner.rows<Project>(
    { name: 'projects', sql: 'SELECT id, organization_id, name, timezone, created_at FROM projects FINAL ORDER BY id', params: {} },
    { timeoutS: 10 },
  )
}

export async function createProject(
  runner: QueryRunner,
  p: { id: string; name: string; timezone: string; organizationId: string },
): Promise<void> {
  await runner.command(
    {
      name: 'project_insert',
      sql: `INSERT INTO projects (id, organization_id, name, timezone)
            SELECT {id:String}, {org:String}, {name:String}, {tz:String}`,
      params: { id: p.id, org: p.organizationId, name: p.name, tz: p.timezone },
    },
  )
}
