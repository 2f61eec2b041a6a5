/** Migrations over HTTP on a ClickHouse server: recorded once, idempotent, the tables the queries name. */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { loadMigrations, migrate } from '../../src/clickhouse/migrate.ts'
import { describeServer, openServerRuntime, type ServerRuntime } from './helpers.ts'

describeServer('migrations on a server', () => {
  let rt: ServerRuntime
  beforeAll(async () => {
    rt = await openServerRuntime('migrations')
  })
  afterAll(async () => {
    await rt?.dispose()
  })

  const tables = () =>
    rt.runner.rows<{ name: string; engine: string; create_table_query: string }>(
      { name: 'tables', sql: 'SELECT name, engine, create_table_query FROM system.tables WHERE database = currentDatabase() ORDER BY name', params: {} },
      { timeoutS: 30 },
    )

  it('records every schema file once and creates the tables in the configured database', async () => {
    const recorded = await rt.runner.rows<{ version: string }>(
      { name: 'recorded', sql: 'SELECT version FROM schema_migrations ORDER BY version', params: {} },
      { timeoutS: 30 },
    )
    expect(recorded.map((r) => r.version)).toEqual(loadMigrations().map((m) => m.version))
    const byName = Object.fromEntries((await tables()).map((t) => [t.name, t.engine]))
    expect(byName).toMatchObject({
      events: 'MergeTree',
      sessions: 'AggregatingMergeTree',
      sessions_mv: 'MaterializedView',
      session_timeline: 'MergeTree',
      session_timeline_mv: 'MaterializedView',
      projects: 'ReplacingMergeTree',
      clients: 'ReplacingMergeTree',
      profiles: 'ReplacingMergeTree',
      event_meta: 'ReplacingMergeTree',
      quarry_settings: 'MergeTree',
      schema_migrations: 'MergeTree',
    })
    const [db] = await rt.runner.rows<{ d: string }>({ name: 'db', sql: 'SELECT currentDatabase() AS d', params: {} }, { timeoutS: 30 })
    expect(db!.d).toBe(rt.database)
  })

  it('apply nothing the second time and leave the DDL as it was', async () => {
    const before = await tables()
    expect(await migrate(rt.engine.client)).toEqual([])
    for (const m of loadMigrations()) for (const statement of m.statements) await rt.engine.client.command({ query: statement })
    expect(await tables()).toEqual(before)
  })
})
