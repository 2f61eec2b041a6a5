/**
 * Cluster mode's DDL, generated from the single-node schema files: every statement parses (the
 * embedded engine formats it), and engines, ON CLUSTER, Keeper paths, macros and sharding keys are
 * what the layout says. The views' cluster forms run here over local tables, so their rewrite
 * is checked by what they compute, not only by its text.
 */
import type { ClickHouseClient } from '@clickhouse/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clusterOf, clusterStatements, registerCluster, type ClusterTarget } from '../src/clickhouse/cluster.ts'
import { httpClientOptions } from '../src/clickhouse/engine/http.ts'
import { openEngine } from '../src/clickhouse/engine/index.ts'
import { loadMigrations, migrate, SCHEMA_MIGRATIONS_DDL } from '../src/clickhouse/migrate.ts'
import { ConfigError } from '../src/config.ts'
import { openTestRuntime, testConfig, type TestRuntime } from './helpers/runtime.ts'

const TARGET: ClusterTarget = { cluster: 'quarry_cluster', database: 'quarry_db' }
const SHARDED_PATH = "'/clickhouse/tables/{shard}/{database}/{table}'"
const EVERYWHERE_PATH = "'/clickhouse/tables/all/{database}/{table}'"

let rt: TestRuntime
beforeAll(async () => {
  rt = await openTestRuntime()
})
afterAll(async () => {
  await rt?.dispose()
})

async function format(sql: string): Promise<string> {
  const rows = await rt.runner.rows<{ f: string }>(
    { name: 'format', sql: 'SELECT formatQuery({q:String}) AS f', params: { q: sql } },
    { timeoutS: 10 },
  )
  return rows[0]!.f
}

const singleNode = () => [SCHEMA_MIGRATIONS_DDL, ...loadMigrations().flatMap((m) => m.statements)]

interface Created {
  kind: 'table' | 'view'
  name: string
  formatted: string
}

/** Every generated statement, formatted by ClickHouse, by the object it creates. */
async function generated(): Promise<Map<string, Created>> {
  const out = new Map<string, Created>()
  for (const statement of singleNode()) {
    for (const sql of clusterStatements(statement, TARGET)) {
      const formatted = await format(sql)
      const dropped = /^DROP (?:TABLE|VIEW) IF EXISTS (\w+) ON CLUSTER /.exec(formatted)
      if (dropped) {
        out.delete(dropped[1]!)
        continue
      }
      if (/^INSERT INTO \w+/.test(formatted)) continue
      if (/^ALTER TABLE \w+ ON CLUSTER /.test(formatted)) continue
      const m = /^CREATE (TABLE|MATERIALIZED VIEW) IF NOT EXISTS (\w+) /.exec(formatted)
      expect(m, formatted).not.toBeNull()
      out.set(m![2]!, { kind: m![1] === 'TABLE' ? 'table' : 'view', name: m![2]!, formatted })
    }
  }
  return out
}

/** ENGINE = Name(args…) of a formatted CREATE TABLE, its arguments split at top-level commas. */
function engineOf(formatted: string): { name: string; args: string[] } {
  const m = /\nENGINE = (\w+)(?:\((.*)\))?$/m.exec(formatted)
  if (!m) throw new Error(`no engine in ${formatted}`)
  const args: string[] = []
  let depth = 0
  let current = ''
  for (const ch of m[2] ?? '') {
    if (ch === '(') depth++
    if (ch === ')') depth--
    if (ch === ',' && depth === 0) {
      args.push(current.trim())
      current = ''
    } else current += ch
  }
  if (current.trim()) args.push(current.trim())
  return { name: m[1]!, args }
}

// What the layout says, written out by hand.
const REPLICATED: Record<string, { engine: string; path: string; extra: string[] }> = {
  events_local: { engine: 'ReplicatedMergeTree', path: SHARDED_PATH, extra: [] },
  sessions_local: { engine: 'ReplicatedAggregatingMergeTree', path: SHARDED_PATH, extra: [] },
  session_timeline_local: { engine: 'ReplicatedMergeTree', path: SHARDED_PATH, extra: [] },
  event_inserts_local: { engine: 'ReplicatedMergeTree', path: SHARDED_PATH, extra: [] },
  projects: { engine: 'ReplicatedReplacingMergeTree', path: EVERYWHERE_PATH, extra: [] },
  clients: { engine: 'ReplicatedReplacingMergeTree', path: EVERYWHERE_PATH, extra: ['version'] },
  profiles: { engine: 'ReplicatedReplacingMergeTree', path: EVERYWHERE_PATH, extra: ['last_seen_at'] },
  event_meta: { engine: 'ReplicatedReplacingMergeTree', path: EVERYWHERE_PATH, extra: ['created_at'] },
  quarry_settings: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  schema_migrations: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  // The sealed history is replicated to every node (not yet sharded like events).
  sealed_visitors: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_sessions: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_rollups: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_rollup_last: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_event_rollups: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_event_halves: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_session_events: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_person_events: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_device_profiles: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_profile_rollups: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_page_views: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_page_days: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_page_ends: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_page_keys: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_page_countries: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_event_postings: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_revenue_events: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_page_revenue: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_dimension_revenue: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_session_days: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_session_keys: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_builds: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_live: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_live_events: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_live_pages: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_live_profiles: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_live_held: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_active_users: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  sealed_live_seen: { engine: 'ReplicatedMergeTree', path: EVERYWHERE_PATH, extra: [] },
  groups: { engine: 'ReplicatedReplacingMergeTree', path: EVERYWHERE_PATH, extra: ['version', 'deleted'] },
}
const DISTRIBUTED: Record<string, { local: string; key: string }> = {
  events: { local: 'events_local', key: 'cityHash64(project_id, session_id)' },
  sessions: { local: 'sessions_local', key: 'cityHash64(project_id, id)' },
  session_timeline: { local: 'session_timeline_local', key: 'cityHash64(project_id, session_key)' },
  event_inserts: { local: 'event_inserts_local', key: 'cityHash64(project_id)' },
}

const VIEWS: Record<string, string> = {
  sessions_mv: 'sessions_local',
  session_timeline_mv: 'session_timeline_local',
  event_inserts_mv: 'event_inserts_local',
}

describe('cluster DDL', () => {
  it('creates exactly the replicated, distributed and view objects of the layout, each ON CLUSTER', async () => {
    const objects = await generated()
    expect([...objects.keys()].sort()).toEqual([...Object.keys(REPLICATED), ...Object.keys(DISTRIBUTED), ...Object.keys(VIEWS)].sort())
    for (const o of objects.values()) expect(o.formatted.split('\n')[0]).toContain(`${o.name} ON CLUSTER quarry_cluster`)
  })

  it("alters the schema's sharded tables where their data is: events_by_name goes to events_local; a replicated table keeps its name", () => {
    const altered = singleNode()
      .flatMap((statement) => clusterStatements(statement, TARGET))
      .flatMap((sql) => /^ALTER TABLE (\w+) ON CLUSTER /.exec(sql)?.[1] ?? [])
    // 019 adds a column: to the sharded tables' locals and their Distributed tables both; 023 two to sealed_builds; 025 columns to sealed_session_events; 026 a codec and an index of it; 027 one to sealed_sessions; 029 one to sealed_event_rollups and one to sealed_live_profiles; 030 drops 025's; 034 two to sealed_page_days and one to sealed_live_pages; 035 codecs and types of sealed_sessions and sealed_page_views; 037 drops a column of sealed_sessions, and 045 another; 046 one to sealed_builds, and 052 another; 053 resets two settings of sessions, on its locals only (storage, not columns).
    expect(altered).toEqual(['events_local', 'events_local', 'events_local', 'sealed_builds', 'events_local', 'events', 'profiles', 'sessions_local', 'sessions', 'sealed_builds', 'sealed_builds', 'sealed_session_events', 'sealed_session_events', 'sealed_sessions', 'sealed_event_rollups', 'sealed_live_profiles', 'sealed_session_events', 'sealed_page_days', 'sealed_page_days', 'sealed_live_pages', 'sealed_sessions', 'sealed_page_views', 'sealed_sessions', 'sealed_sessions', 'sealed_builds', 'sealed_builds', 'sessions_local'])
  })

  it('gives every MergeTree table its replicated engine, Keeper path and replica macro, keeping its own arguments', async () => {
    const objects = await generated()
    for (const [name, want] of Object.entries(REPLICATED)) {
      const engine = engineOf(objects.get(name)!.formatted)
      expect({ table: name, ...engine }).toEqual({ table: name, name: want.engine, args: [want.path, "'{replica}'", ...want.extra] })
    }
  })

  it('shards events and sessions by project and session, under the names the queries use', async () => {
    const objects = await generated()
    for (const [name, want] of Object.entries(DISTRIBUTED)) {
      const { formatted } = objects.get(name)!
      expect(formatted).toContain(` AS ${want.local}\n`)
      expect(engineOf(formatted)).toEqual({
        name: 'Distributed',
        args: ["'quarry_cluster'", "'quarry_db'", `'${want.local}'`, want.key],
      })
    }
    // A session's events and its sessions row hash alike: sessions.id is events.session_id.
    expect(DISTRIBUTED.events!.key.replace('session_id', 'id')).toBe(DISTRIBUTED.sessions!.key)
  })

  it('keeps every column, key and partitioning of the single-node tables', async () => {
    for (const statement of singleNode()) {
      const single = await format(statement)
      if (!single.startsWith('CREATE TABLE')) continue
      const name = /^CREATE TABLE IF NOT EXISTS (\w+)/.exec(single)![1]!
      const local = name in DISTRIBUTED ? DISTRIBUTED[name]!.local : name
      const cluster = await format(clusterStatements(statement, TARGET)[0]!)
      const columns = (f: string) => f.slice(f.indexOf('\n('), f.indexOf('\nENGINE'))
      const after = (f: string) => f.slice(f.indexOf('\n', f.indexOf('\nENGINE') + 1))
      expect(cluster.startsWith(`CREATE TABLE IF NOT EXISTS ${local} ON CLUSTER quarry_cluster\n(`)).toBe(true)
      expect(columns(cluster)).toBe(columns(single))
      expect(after(cluster)).toBe(after(single))
    }
  })

  it('points the views at the local tables of their node', async () => {
    for (const [name, target] of Object.entries(VIEWS)) {
      const view = (await generated()).get(name)!.formatted
      expect(view.split('\n')[0]).toBe(`CREATE MATERIALIZED VIEW IF NOT EXISTS ${name} ON CLUSTER quarry_cluster TO ${target}`)
      expect(view).toMatch(/FROM events_local\b/)
      expect(view).not.toMatch(/FROM events\b(?!_local)/)
    }
  })

  it("computes each node's sessions, timeline and insert log from its local events, as the single-node views do", async () => {
    // Built here as one node would build them, minus Keeper: the replicated engines become plain.
    const unreplicate = (sql: string) =>
      sql
        .replace(/ ON CLUSTER '[^']*'/, '')
        .replace(/Replicated(\w*)MergeTree\('[^']*', '[^']*'(?:, )?/, '$1MergeTree(')
        .replace(new RegExp(`\\b(${Object.keys(VIEWS).join('|')})\\b`), '$1_node')
    const client = rt.engine.client
    for (const statement of loadMigrations().flatMap((m) => m.statements)) {
      for (const sql of clusterStatements(statement, TARGET)) {
        if (/ENGINE = Distributed/.test(sql)) continue
        if (!new RegExp(`\\b(events_local|${Object.values(VIEWS).join('|')})\\b`).test(sql)) continue
        await client.command({ query: unreplicate(sql) })
      }
    }
    const events = [
      { session_id: 's1', name: 'screen_view', path: '/a', created_at: '2026-01-01 10:00:00.000' },
      { session_id: 's1', name: 'click', path: '/a', created_at: '2026-01-01 10:00:05.000' },
      { session_id: 's1', name: 'screen_view', path: '/b', created_at: '2026-01-01 10:00:09.500' },
      { session_id: 's2', name: 'screen_view', path: '/c', created_at: '2026-01-02 08:00:00.000' },
      { session_id: '', name: 'server_event', path: '', created_at: '2026-01-02 09:00:00.000' },
    ].map((e) => ({ ...e, project_id: 'p', device_id: 'd', profile_id: 'd', origin: 'https://x' }))
    // Two inserts, so session s1 reaches the local sessions table as two partial rows.
    await client.insert({ table: 'events_local', values: events.slice(0, 2), format: 'JSONEachRow' })
    await client.insert({ table: 'events_local', values: events.slice(2), format: 'JSONEachRow' })
    const rows = await rt.runner.rows<Record<string, unknown>>(
      {
        name: 'sessions_local',
        sql: `SELECT id, screen_view_count, event_count, duration, is_bounce, entry_path, exit_path
              FROM sessions_local FINAL ORDER BY id`,
        params: {},
      },
      { timeoutS: 10 },
    )
    expect(rows).toEqual([
      { id: 's1', screen_view_count: 2, event_count: 3, duration: 9500, is_bounce: 0, entry_path: '/a', exit_path: '/b' },
      { id: 's2', screen_view_count: 1, event_count: 1, duration: 0, is_bounce: 1, entry_path: '/c', exit_path: '/c' },
    ])
    const timeline = await rt.runner.rows<{ path: string; is_view: boolean }>(
      { name: 'session_timeline_local', sql: 'SELECT path, is_view FROM session_timeline_local ORDER BY created_at', params: {} },
      { timeoutS: 10 },
    )
    const views = (e: (typeof events)[number]) => e.name === 'screen_view'
    expect(timeline).toEqual(events.map((e) => ({ path: views(e) ? e.path : '', is_view: views(e) })))
    const log = await rt.runner.rows<{ earliest: string }>(
      { name: 'event_inserts_local', sql: 'SELECT earliest FROM event_inserts_local ORDER BY logged_at, earliest', params: {} },
      { timeoutS: 10 },
    )
    const earliest = (block: typeof events) => block.map((e) => e.created_at).sort()[0]
    expect(log.map((r) => r.earliest)).toEqual([earliest(events.slice(0, 2)), earliest(events.slice(2))])
  })
})

describe('cluster forms of later migrations', () => {
  it('alters a sharded table locally and, for column changes, its Distributed table too', async () => {
    const columns = clusterStatements('ALTER TABLE events ADD COLUMN IF NOT EXISTS x String, DROP COLUMN IF EXISTS y', TARGET)
    expect(columns).toHaveLength(2)
    expect(await format(columns[0]!)).toMatch(/^ALTER TABLE events_local ON CLUSTER quarry_cluster\n/)
    expect(await format(columns[1]!)).toMatch(/^ALTER TABLE events ON CLUSTER quarry_cluster\n/)
    const index = clusterStatements('ALTER TABLE events ADD INDEX idx_path path TYPE bloom_filter GRANULARITY 4', TARGET)
    expect(index).toHaveLength(1)
    expect(await format(index[0]!)).toMatch(/^ALTER TABLE events_local ON CLUSTER quarry_cluster\n/)
    const small = clusterStatements('ALTER TABLE projects ADD COLUMN IF NOT EXISTS z String', TARGET)
    expect(small).toHaveLength(1)
    expect(await format(small[0]!)).toMatch(/^ALTER TABLE projects ON CLUSTER quarry_cluster\n/)
  })

  it('drops both halves of a sharded table', async () => {
    const drops = clusterStatements('DROP TABLE IF EXISTS sessions', TARGET).map((s) => s.replace(/\s+/g, ' '))
    expect(drops).toEqual([
      "DROP TABLE IF EXISTS sessions ON CLUSTER 'quarry_cluster' SYNC",
      "DROP TABLE IF EXISTS sessions_local ON CLUSTER 'quarry_cluster' SYNC",
    ])
    for (const sql of drops) await format(sql)
  })

  it('runs a backfill once, as written, through the Distributed tables', () => {
    const backfill = 'INSERT INTO sessions\nSELECT project_id, session_id AS id FROM events GROUP BY project_id, session_id'
    expect(clusterStatements(backfill, TARGET)).toEqual([backfill])
  })

  it('refuses what it cannot place on a cluster', () => {
    expect(() => clusterStatements('INSERT INTO projects VALUES (1)', TARGET)).toThrow(/no form/)
    expect(() => clusterStatements('CREATE TABLE t (a UInt8) ENGINE = Memory', TARGET)).toThrow(/MergeTree/)
    expect(() =>
      clusterStatements('CREATE MATERIALIZED VIEW v TO projects AS SELECT project_id AS id FROM events', TARGET),
    ).toThrow(/sharded/)
  })
})

describe('migrate in cluster mode', () => {
  function recordingClient(applied: string[] = []) {
    const commands: string[] = []
    const inserts: unknown[] = []
    const client = {
      command: async ({ query }: { query: string }) => {
        commands.push(query)
        return {}
      },
      query: async () => ({ json: async () => applied.map((version) => ({ version })) }),
      insert: async (params: { values: unknown[] }) => {
        inserts.push(...params.values)
        return {}
      },
    } as unknown as ClickHouseClient
    return { client, commands, inserts }
  }

  it('runs every statement in its cluster form when the engine registered the client for a cluster', async () => {
    const { client, commands, inserts } = recordingClient()
    registerCluster(client, TARGET)
    expect(clusterOf(client)).toEqual(TARGET)
    const versions = loadMigrations().map((m) => m.version)
    expect(await migrate(client)).toEqual(versions)
    // The migration lock is taken on the whole cluster first (migration-lock.ts).
    expect(commands.shift()).toMatch(/^CREATE TABLE schema_migrations_lock ON CLUSTER 'quarry_cluster' /)
    // A sharded table is created, dropped and given a column in two halves; a backfill runs once, not on each node.
    const sharded = Object.keys(DISTRIBUTED).join('|')
    const halves = new RegExp(`^((CREATE|DROP) TABLE (IF (NOT )?EXISTS )?(${sharded})\\b|ALTER TABLE (${sharded}) ADD COLUMN\\b)`)
    const isBackfill = (sql: string) => /^INSERT INTO \w+\s+SELECT/.test(sql)
    expect(commands.length).toBe(singleNode().length + singleNode().filter((sql) => halves.test(sql)).length)
    for (const sql of commands) if (!isBackfill(sql)) expect(sql).toContain("ON CLUSTER 'quarry_cluster'")
    expect(commands.filter(isBackfill)).toEqual(singleNode().filter(isBackfill))
    expect(commands[0]).toMatch(/^CREATE TABLE IF NOT EXISTS schema_migrations ON CLUSTER/)
    expect(inserts).toEqual(versions.map((version) => ({ version })))
  })

  it('leaves a single server alone', async () => {
    const { client, commands } = recordingClient(loadMigrations().map((m) => m.version))
    expect(await migrate(client)).toEqual([])
    expect(commands.slice(1)).toEqual([SCHEMA_MIGRATIONS_DDL])
    expect(commands[0]).toMatch(/^CREATE TABLE schema_migrations_lock \(/)
  })
})

describe('HTTP client options', () => {
  it('outlast the longest server-side limit and drop idle sockets before the server does', () => {
    const config = testConfig({ QUARRY_EXPORT_TIMEOUT_S: '7200', QUARRY_QUERY_TIMEOUT_S: '5', QUARRY_MAX_CONCURRENT_QUERIES: '6' })
    const options = httpClientOptions(config, 'http://ch:8123')
    expect(options.request_timeout).toBeGreaterThan(7200 * 1000)
    expect(options.keep_alive.idle_socket_ttl).toBeLessThan(3000)
    expect(options.max_open_connections).toBe(8)
    expect(options.compression).toEqual({ response: true })
    expect(options).not.toHaveProperty('clickhouse_settings')
    // A short export limit still leaves room for an ON CLUSTER statement's wait.
    const short = httpClientOptions(testConfig({ QUARRY_EXPORT_TIMEOUT_S: '60' }), 'http://ch:8123')
    expect(short.request_timeout).toBeGreaterThan(180 * 1000)
  })

  it('carry the distributed settings in cluster mode only', () => {
    const options = httpClientOptions(testConfig({ CLICKHOUSE_CLUSTER: 'c1' }), 'http://ch:8123')
    expect(options.clickhouse_settings).toEqual({ distributed_product_mode: 'global', distributed_foreground_insert: 1 })
  })

  it('refuse a cluster without a server', async () => {
    await expect(openEngine(testConfig({ CLICKHOUSE_CLUSTER: 'c1', QUARRY_DATA_DIR: rt.dir }))).rejects.toThrow(ConfigError)
  })
})
