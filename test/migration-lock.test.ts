/**
 * The migration lock (src/clickhouse/migration-lock.ts) with several migrators over one engine.
 * chDB lets one process own a data directory, so the instances that would start together against a
 * ClickHouse server are migrators sharing one embedded engine in this process: the protocol is the
 * same statements either way.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openEngine, type Engine } from '../src/clickhouse/engine/index.ts'
import { loadMigrations, migrate } from '../src/clickhouse/migrate.ts'
import { LOCK_TABLE, MigrationLockTimeoutError, withMigrationLock } from '../src/clickhouse/migration-lock.ts'
import { testConfig } from './helpers/runtime.ts'

const dir = mkdtempSync(join(tmpdir(), 'quarry-migration-lock-'))
let engine: Engine

beforeAll(async () => {
  engine = await openEngine(testConfig({ QUARRY_DATA_DIR: dir }))
}, 60_000)

afterAll(async () => {
  await engine?.close()
  rmSync(dir, { recursive: true, force: true })
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function rows<T>(query: string): Promise<T[]> {
  return (await engine.client.query({ query, format: 'JSONEachRow' })).json<T>()
}

const lockTables = async () =>
  (await rows<{ name: string }>(`SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE '${LOCK_TABLE}%'`)).map((r) => r.name)

describe('two instances migrating one fresh database at once', () => {
  it('apply each migration once between them, and leave no lock behind', async () => {
    const versions = loadMigrations().map((m) => m.version)
    const [a, b] = await Promise.all([migrate(engine.client), migrate(engine.client)])
    // One did all the work, the other found it done: together each version once.
    expect([...a, ...b].sort()).toEqual(versions)
    expect(a.length === 0 || b.length === 0).toBe(true)
    const recorded = await rows<{ version: string; n: string }>('SELECT version, toUInt32(count()) AS n FROM schema_migrations GROUP BY version ORDER BY version')
    expect(recorded).toEqual(versions.map((version) => ({ version, n: 1 })))
    expect(await lockTables()).toEqual([])
  }, 120_000)
})

describe('the lock', () => {
  it('keeps a second migrator waiting while another holds it', async () => {
    let released = false
    let inside = 0
    let most = 0
    const work = async (ms: number) => {
      inside++
      most = Math.max(most, inside)
      await sleep(ms)
      inside--
    }
    const first = withMigrationLock(engine.client, () => work(600), { pollMs: 20 })
    await sleep(100)
    const second = withMigrationLock(engine.client, async () => {
      expect(released).toBe(true)
      await work(10)
    }, { pollMs: 20 })
    await first
    released = true
    await second
    expect(most).toBe(1)
    expect(await lockTables()).toEqual([])
  })

  it('gives up with a clear error when the holder never lets go', async () => {
    await engine.client.command({ query: `CREATE TABLE ${LOCK_TABLE} (owner String) ENGINE = Null COMMENT 'held-by-a-test'` })
    try {
      await expect(withMigrationLock(engine.client, async () => 1, { pollMs: 20, timeoutMs: 300 })).rejects.toThrow(MigrationLockTimeoutError)
      await expect(withMigrationLock(engine.client, async () => 1, { pollMs: 20, timeoutMs: 300 })).rejects.toThrow(/DROP TABLE schema_migrations_lock/)
    } finally {
      await engine.client.command({ query: `DROP TABLE ${LOCK_TABLE} SYNC` })
    }
  })

  it('is taken over from a holder that died, by one of several waiters at a time', async () => {
    // A lock left by a crashed migrator; its table's metadata time (whole seconds) makes it stale.
    await engine.client.command({ query: `CREATE TABLE ${LOCK_TABLE} (owner String) ENGINE = Null COMMENT '00000000-0000-4000-8000-000000000000'` })
    await sleep(2500)
    let inside = 0
    let most = 0
    let ran = 0
    const waiter = () =>
      withMigrationLock(engine.client, async () => {
        inside++
        most = Math.max(most, inside)
        ran++
        await sleep(150)
        inside--
      }, { staleMs: 1500, pollMs: 20 })
    await Promise.all([waiter(), waiter(), waiter()])
    expect(ran).toBe(3)
    expect(most).toBe(1)
    expect(await lockTables()).toEqual([])
  }, 30_000)
})
