import { createHash, randomBytes } from 'node:crypto'
import type { QueryRunner } from './clickhouse/run.ts'

const READ = { name: 'signing_key', sql: "SELECT value FROM quarry_settings WHERE name = 'signing_key' ORDER BY created_at, value LIMIT 1", params: {} }

/**
 * The key cursors are signed with: derived from QUARRY_SECRET when set, otherwise generated on
 * first use and stored in `quarry_settings`, so cursors survive restarts.
 */
export async function loadSigningKey(runner: QueryRunner, secret: string | undefined): Promise<Buffer> {
  if (secret) return createHash('sha256').update(`quarry-cursor:${secret}`).digest()
  const existing = await runner.rows<{ value: string }>(READ, { timeoutS: 10 })
  if (existing[0]) return Buffer.from(existing[0].value, 'hex')
  // The earliest row wins, so two instances racing on first start settle on one key.
  await runner.command({
    name: 'signing_key_insert',
    sql: "INSERT INTO quarry_settings (name, value) SELECT 'signing_key', {value:String}",
    params: { value: randomBytes(32).toString('hex') },
  })
  const [first] = await runner.rows<{ value: string }>(READ, { timeoutS: 10 })
  return Buffer.from(first!.value, 'hex')
}
