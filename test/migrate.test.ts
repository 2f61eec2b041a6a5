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

// By name: reads run on sessions of their own (read-lanes.ts), which a USE on the connection does not move.
const tables = (database = rt.config.CLICKHOUSE_DATABASE) =>
  rt.runner.rows<TableDefinition>(
    {
      name: 'tables',
      sql: 'SELECT name, engine, create_table_query FROM system.tables WHERE database = {database:String} ORDER BY name',
      params: { database },
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
    for (const table of ['events', 'sessions', 'sessions_mv', 'session_timeline', 'session_timeline_mv', 'projects', 'clients', 'profiles', 'event_meta', 'schema_migrations']) {
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
    // Replayed in a database of its own, each migration twice over the ones before it: the state
    // an interrupted run leaves is the one the repeat starts from.
    const command = (query: string) => rt.engine.client.command({ query })
    const database = rt.config.CLICKHOUSE_DATABASE
    const ddlBefore = await tables()
    await command('CREATE DATABASE replay')
    await command('USE replay')
    try {
      for (const migration of loadMigrations()) {
        for (const statement of [...migration.statements, ...migration.statements]) await command(statement)
      }
      const inReplay = await tables('replay')
      expect(inReplay.every((t) => t.create_table_query.includes('replay.'))).toBe(true)
      const replayed = inReplay.map((t) => ({ ...t, create_table_query: t.create_table_query.replaceAll('replay.', `${database}.`) }))
      expect(replayed).toEqual(ddlBefore.filter((t) => t.name !== 'schema_migrations'))
    } finally {
      await command(`USE ${database}`)
      await command('DROP DATABASE replay')
    }
  })
})

describe('the events_by_name projection (010)', () => {
  const project = 'proj-by-name'
  // Revenue events one in a hundred, over three granules of `events`: the projection reads fewer
  // marks than the table, so the engine answers from it (the plan below says so).
  const events = Array.from({ length: 24_000 }, (_, i) => ({
    project_id: project,
    session_id: `s${i % 500}`,
    name: i % 100 === 7 ? 'revenue' : 'screen_view',
    revenue: i % 100 === 7 ? 100 + (i % 1_000) : 0,
    created_at: new Date(Date.UTC(2026, 2, 1) + i * 1_000).toISOString().replace('T', ' ').replace('Z', ''),
  }))
  const revenueSql = `SELECT count() AS n, sum(revenue) AS total FROM events WHERE project_id = {p:String} AND name = 'revenue'`
  const revenue = async () =>
    (await rt.runner.rows<{ n: number; total: number }>({ name: 'revenue', sql: revenueSql, params: { p: project } }, { timeoutS: 10 }))[0]!
  const expected = (rows: typeof events) => {
    const paid = rows.filter((e) => e.name === 'revenue')
    return { n: paid.length, total: paid.reduce((sum, e) => sum + e.revenue, 0) }
  }

  it('answers the revenue sum, and a lightweight DELETE takes the deleted rows out of it', async () => {
    await rt.engine.client.insert({ table: 'events', values: events, format: 'JSONEachRow' })
    const plan = await rt.engine.client.query({
      query: `EXPLAIN ${revenueSql}`,
      query_params: { p: project },
      format: 'TabSeparatedRaw',
    })
    expect(await plan.text()).toMatch(/ReadFromMergeTree \(events_by_name\)/)
    expect(await revenue()).toEqual(expected(events))

    await rt.engine.client.command({ query: 'DELETE FROM events WHERE project_id = {p:String} AND revenue > 600', query_params: { p: project } })
    expect(await revenue()).toEqual(expected(events.filter((e) => e.revenue <= 600)))
  })
})

describe('the sealed columns a filtered window reads whole (035)', () => {
  it('store the sessions times and the views times and numbers without ZSTD, and the views pages and titles as dictionaries', async () => {
    const columns = await rt.runner.rows<{ table: string; name: string; type: string; compression_codec: string }>(
      {
        name: 'columns',
        sql: `SELECT table, name, type, compression_codec FROM system.columns
          WHERE database = currentDatabase() AND (table, name) IN [('sealed_sessions', 'created_at'), ('sealed_sessions', 'ended_at'),
            ('sealed_page_views', 'created_at'), ('sealed_page_views', 'sno'), ('sealed_page_views', 'path'), ('sealed_page_views', 'title')]
          ORDER BY table, name`,
        params: {},
      },
      { timeoutS: 10 },
    )
    expect(columns).toEqual([
      { table: 'sealed_page_views', name: 'created_at', type: "DateTime64(3, 'UTC')", compression_codec: 'CODEC(LZ4)' },
      { table: 'sealed_page_views', name: 'path', type: 'LowCardinality(String)', compression_codec: 'CODEC(ZSTD(1))' },
      { table: 'sealed_page_views', name: 'sno', type: 'UInt32', compression_codec: 'CODEC(LZ4)' },
      { table: 'sealed_page_views', name: 'title', type: 'LowCardinality(String)', compression_codec: 'CODEC(ZSTD(1))' },
      { table: 'sealed_sessions', name: 'created_at', type: "DateTime64(3, 'UTC')", compression_codec: 'CODEC(LZ4)' },
      { table: 'sealed_sessions', name: 'ended_at', type: "DateTime64(3, 'UTC')", compression_codec: 'CODEC(LZ4)' },
    ])
  })
})

describe('the sealed sessions without their event count (037) and id (045)', () => {
  it('drop the columns no request reads', async () => {
    const columns = await rt.runner.rows<{ name: string }>(
      { name: 'columns', sql: "SELECT name FROM system.columns WHERE database = currentDatabase() AND table = 'sealed_sessions' AND name IN ('event_count', 'id')", params: {} },
      { timeoutS: 10 },
    )
    expect(columns).toEqual([])
  })
})
