import { randomUUID } from 'node:crypto'
import { EngineUnavailableError } from '../clickhouse/errors.ts'
import type { QueryRunner } from '../clickhouse/run.ts'
import { generateSecret, hashSecret } from './secrets.ts'

export type ClientType = 'read' | 'write' | 'root'
export const CLIENT_TYPES: readonly ClientType[] = ['read', 'write', 'root']

export interface ClientRow {
  id: string
  secret_hash: string
  type: ClientType
  project_id: string | null
  organization_id: string
  name: string
  created_at: string
  revoked_at: string | null
}

export type PublicClient = Omit<ClientRow, 'secret_hash'>

const COLUMNS = 'id, type, project_id, organization_id, name, created_at, revoked_at'
const LOOKUP_COLUMNS = [...COLUMNS.split(', '), 'secret_hash']

/**
 * The client's row, or undefined when there is none. The lookup answers exactly one row either way
 * (`found` counts the matches), so a read that comes back without it was cut short, and is thrown as
 * the engine not answering instead of passing for "no such client": a warm run once got 401 for a
 * valid client, then 429 for the rest of the run (benchmarks/README.md, twelfth stop).
 */
export async function findClient(runner: QueryRunner, id: string): Promise<ClientRow | undefined> {
  const rows = await runner.rows<ClientRow & { found: number }>(
    {
      name: 'client_by_id',
      // Qualified in WHERE: the bare name would be the aggregate's alias.
      sql: `SELECT count() AS found, ${LOOKUP_COLUMNS.map((c) => `any(${c}) AS ${c}`).join(', ')}
            FROM clients FINAL WHERE clients.id = toUUIDOrZero({id:String})`,
      params: { id },
    },
    { timeoutS: 5 },
  )
  const [answer] = rows
  if (rows.length !== 1 || typeof answer?.found !== 'number') throw new EngineUnavailableError('the client lookup came back without its row')
  if (answer.found === 0) return undefined
  const { found: _found, ...row } = answer
  return row
}

export async function listClients(runner: QueryRunner): Promise<PublicClient[]> {
  return runner.rows<PublicClient>(
    { name: 'clients', sql: `SELECT ${COLUMNS} FROM clients FINAL ORDER BY created_at, id`, params: {} },
    { timeoutS: 10 },
  )
}

/** Creates a client and returns its secret, which is stored only as a hash from here on. */
export async function createClientRow(
  runner: QueryRunner,
  c: { type: ClientType; projectId: string | null; organizationId: string; name: string },
): Promise<{ id: string; secret: string }> {
  const id = randomUUID()
  const secret = generateSecret()
  await runner.command(
    {
      name: 'client_insert',
      sql: `INSERT INTO clients (id, secret_hash, type, project_id, organization_id, name)
            SELECT {id:UUID}, {hash:String}, {type:String}, {project:Nullable(String)}, {org:String}, {name:String}`,
      params: { id, hash: await hashSecret(secret), type: c.type, project: c.projectId, org: c.organizationId, name: c.name },
    },
  )
  return { id, secret }
}

/** Returns false when no such client exists. */
export async function revokeClient(runner: QueryRunner, id: string): Promise<boolean> {
  const existing = await findClient(runner, id)
  if (!existing) return false
  await runner.command(
    {
      name: 'client_revoke',
      sql: `INSERT INTO clients (id, secret_hash, type, project_id, organization_id, name, created_at, revoked_at)
            SELECT id, secret_hash, type, project_id, organization_id, name, created_at, now64(3)
            FROM clients FINAL WHERE id = {id:UUID}`,
      params: { id: existing.id },
    },
  )
  return true
}
