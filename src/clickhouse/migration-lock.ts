import { randomUUID } from 'node:crypto'
import type { ClickHouseClient } from '@clickhouse/client'
import { quote, type ClusterTarget } from './cluster.ts'

/**
 * One migrator at a time per database, for instances that start together against one server.
 *
 * The lock is a table: `CREATE TABLE` without IF NOT EXISTS succeeds for exactly one caller (the
 * others get TABLE_ALREADY_EXISTS), and on a cluster the distributed DDL queue orders the CREATEs
 * ON CLUSTER so that again only the first succeeds. An insert-then-check protocol over rows would
 * need every insert visible before anyone checks, which ClickHouse does not promise. The holder's
 * id and start are the table's comment; releasing drops the table.
 *
 * A holder that died leaves its table behind. Once older than `staleMs` it is moved aside with
 * RENAME to a name carrying the dead holder's id: of two waiters breaking the same stale lock, the
 * second RENAME fails because the first already took that name, so it cannot move away the lock
 * the first has taken in the meantime. The moved table stays until that first waiter releases.
 */
export const LOCK_TABLE = 'schema_migrations_lock'

export interface MigrationLockOptions {
  /** A lock older than this is taken to belong to a migrator that died. */
  staleMs?: number
  /** How often a waiter looks again. */
  pollMs?: number
  /** How long a waiter waits before giving up with an error. */
  timeoutMs?: number
}

/** Migrations that backfill a large events table can take many minutes; a lock is stale after 30. */
const DEFAULTS: Required<MigrationLockOptions> = { staleMs: 30 * 60_000, pollMs: 250, timeoutMs: 45 * 60_000 }

/** ClickHouse's code for a table that already exists, and for one that does not. */
const TABLE_ALREADY_EXISTS = '57'
const UNKNOWN_TABLE = '60'

export class MigrationLockTimeoutError extends Error {}

const errorCode = (err: unknown): string | undefined => (err as { code?: string })?.code

function onCluster(cluster: ClusterTarget | undefined): string {
  return cluster ? ` ON CLUSTER ${quote(cluster.cluster)}` : ''
}

interface Holder {
  comment: string
  ageMs: number
}

async function currentHolder(client: ClickHouseClient): Promise<Holder | undefined> {
  const result = await client.query({
    query: `SELECT comment, toUInt64(greatest(0, dateDiff('millisecond', metadata_modification_time, now64(3)))) AS age_ms
            FROM system.tables WHERE database = currentDatabase() AND name = {name:String}`,
    query_params: { name: LOCK_TABLE },
    format: 'JSONEachRow',
  })
  const [row] = await result.json<{ comment: string; age_ms: string | number }>()
  return row && { comment: row.comment, ageMs: Number(row.age_ms) }
}

/** Tries once; true when this caller now holds the lock. */
async function tryCreate(client: ClickHouseClient, owner: string, cluster?: ClusterTarget): Promise<boolean> {
  try {
    await client.command({
      // `owner` is a UUID this process made: no outside value reaches the statement.
      query: `CREATE TABLE ${LOCK_TABLE}${onCluster(cluster)} (owner String) ENGINE = Null COMMENT '${owner}'`,
    })
    return true
  } catch (err) {
    if (errorCode(err) === TABLE_ALREADY_EXISTS || /already exists/i.test(String((err as Error).message))) return false
    throw err
  }
}

/** Moves a stale lock aside and returns its new name; undefined when another waiter did first (or its holder released it). */
async function breakStale(client: ClickHouseClient, holder: Holder, cluster?: ClusterTarget): Promise<string | undefined> {
  const owner = /^[0-9a-f-]{36}$/.exec(holder.comment)?.[0] ?? 'unknown'
  const aside = staleName(owner)
  try {
    await client.command({ query: `RENAME TABLE ${LOCK_TABLE} TO ${aside}${onCluster(cluster)}` })
  } catch (err) {
    const code = errorCode(err)
    if (code === TABLE_ALREADY_EXISTS || code === UNKNOWN_TABLE || /already exists|doesn't exist|does not exist/i.test(String((err as Error).message))) return undefined
    throw err
  }
  return aside
}

const staleName = (owner: string) => `${LOCK_TABLE}_stale_${owner.replaceAll('-', '')}`

/** Runs `work` while holding the migration lock of the client's database. */
export async function withMigrationLock<T>(
  client: ClickHouseClient,
  work: () => Promise<T>,
  options: MigrationLockOptions & { cluster?: ClusterTarget } = {},
): Promise<T> {
  const { staleMs, pollMs, timeoutMs } = { ...DEFAULTS, ...options }
  const owner = randomUUID()
  const deadline = performance.now() + timeoutMs
  const movedAside: string[] = []
  while (!(await tryCreate(client, owner, options.cluster))) {
    const holder = await currentHolder(client)
    if (holder && holder.ageMs > staleMs) {
      const aside = await breakStale(client, holder, options.cluster)
      if (aside) movedAside.push(aside)
      continue
    }
    if (performance.now() > deadline) {
      throw new MigrationLockTimeoutError(
        `another instance has been migrating the schema for over ${Math.round(timeoutMs / 1000)} s (lock ${holder?.comment ?? '?'}); ` +
          `if none is running, DROP TABLE ${LOCK_TABLE} and start again`,
      )
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs))
  }
  try {
    return await work()
  } finally {
    // Not a lock another waiter took after judging this one stale.
    for (const aside of movedAside) await client.command({ query: `DROP TABLE IF EXISTS ${aside}${onCluster(options.cluster)} SYNC` })
    if ((await currentHolder(client))?.comment === owner) {
      await client.command({ query: `DROP TABLE IF EXISTS ${LOCK_TABLE}${onCluster(options.cluster)} SYNC` })
    }
  }
}
