import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadMigrations, migrate } from '../src/clickhouse/migrate.ts'
import { openTestRuntime, type TestRuntime } from './helpers/runtime.ts'

interface TableDefinition {
  name: string
  engine: string
  create_table_query: string
}

let rt: TestRuntime

beforeAll(async () => {
  rt = await openTestRuntime()
})

afterAll(async () => {
  await rt?.dispose()
})

const tables = () =>
  rt.runner.rows<TableDefinition>(
    {
      name: 'tables',
      sql: 'SELECT name, engine, create_table_query FROM system.tables WHERE database = currentDatabase() ORDER BY name',
      params: {},
    },
    { timeoutS: 10 },
  )

const recorded = () =>
  rt.runner.rows<{ version: string; applied_at: string }>(
    { name: 'migrations', sql: 'SELECT version, applied_at FROM schema_migrations ORDER BY version', params: {} },
    { timeoutS: 10 },
  )

describe('migrations', () => {
  it('record every schema file once, in order, when the runtime opens', async () => {
    const files = loadMigrations().map((m) => m.version)
    expect(files.length).toBeGreaterThan(0)
    expect((await recorded()).map((r) => r.version)).toEqual(files)
    const names = (await tables()).map((t) => t.name)
    for (const table of ['events', 'sessions', 'sessions_mv', 'projects', 'clients', 'profiles', 'event_meta', 'schema_migrations']) {
      expect(names).toContain(table)
    }
  })

  it('change nothing when applied a second time', async () => {
    const ddlBefore = await tables()
    const recordedBefore = await recorded()
    expect(await migrate(rt.engine.client)).toEqual([])
    expect(await recorded()).toEqual(recordedBefore)
    expect(await tables()).toEqual(ddlBefore)
  })

  it('consist of idempotent statements, so a run interrupted before it was recorded can be repeated', async () => {
    const ddlBefore = await tables()
    for (const migration of loadMigrations()) {
      for (const statement of migration.statements) await rt.engine.client.command({ query: statement })
    }
    expect(await tables()).toEqual(ddlBefore)
  })
})
