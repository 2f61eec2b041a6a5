/**
 * docker/cluster/compose.yml brought up (2 shards x 2 replicas, 3 Keeper nodes) and Quarry run
 * against it in cluster mode: the generated ON CLUSTER DDL on a real cluster, events sharded by
 * session, small tables on every server, and insights equal to the reference model.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DockerComposeEnvironment, Wait, type StartedDockerComposeEnvironment } from 'testcontainers'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createClientRow } from '../../src/auth/clients.ts'
import { importFile } from '../../src/import/import.ts'
import { createLogger } from '../../src/log.ts'
import { createProject } from '../../src/projects.ts'
import { openRuntime, type Runtime } from '../../src/runtime.ts'
import { buildEvents, NOW, PROJECTS } from '../fixtures/insights-data.ts'
import { Dataset, windowOf } from '../fixtures/insights-model.ts'
import { testApp, testConfig } from '../helpers/runtime.ts'
import { describeServer } from './helpers.ts'

const CLUSTER_DIR = fileURLToPath(new URL('../../docker/cluster/', import.meta.url))
const NODES = ['ch-s1r1', 'ch-s1r2', 'ch-s2r1', 'ch-s2r2']
const U = PROJECTS.utc.id

describeServer('a 2 x 2 cluster from docker/cluster/compose.yml', () => {
  let env: StartedDockerComposeEnvironment
  let rt: Runtime
  let dir: string
  let get: (project: string, route: string, query?: Record<string, string>) => Promise<{ status: number; body: any }>
  let app: ReturnType<typeof testApp>
  let headers: Record<string, string>
  const database = `quarry_cluster_${randomBytes(4).toString('hex')}`
  const data = new Dataset(buildEvents())

  beforeAll(async () => {
    let compose = new DockerComposeEnvironment(CLUSTER_DIR, 'compose.yml')
    for (const node of NODES) compose = compose.withWaitStrategy(`${node}-1`, Wait.forHealthCheck())
    env = await compose.up(['keeper1', 'keeper2', 'keeper3', ...NODES])
    const entry = env.getContainer('ch-s1r1-1')
    const config = testConfig({
      CLICKHOUSE_URL: `http://${entry.getHost()}:${entry.getMappedPort(8123)}`,
      CLICKHOUSE_USER: 'quarry',
      CLICKHOUSE_PASSWORD: 'quarry-secret',
      CLICKHOUSE_DATABASE: database,
      CLICKHOUSE_CLUSTER: 'quarry',
      QUARRY_RATE_LIMIT: '1000000',
    })
    rt = await openRuntime(config, createLogger(config.LOG_LEVEL))
    for (const p of Object.values(PROJECTS)) {
      await createProject(rt.runner, { id: p.id, name: p.id, timezone: p.timezone, organizationId: p.organizationId })
    }
    const root = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'root' })
    // Through the Distributed table, in foreground: each row is on its shard when the insert returns.
    await rt.engine.client.insert({ table: 'events', values: buildEvents(), format: 'JSONEachRow' })
    app = testApp(rt, { now: () => NOW })
    headers = { 'openpanel-client-id': root.id, 'openpanel-client-secret': root.secret }
    get = async (project, route, query = {}) => {
      const qs = new URLSearchParams(query).toString()
      const res = await app.request(`http://quarry.test/insights/${project}/${route}${qs ? `?${qs}` : ''}`, { headers })
      return { status: res.status, body: await res.json() }
    }
    dir = mkdtempSync(join(tmpdir(), 'quarry-cluster-'))
  }, 600_000)

  afterAll(async () => {
    await rt?.close()
    await env?.down({ removeVolumes: true })
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  /** Inspection queries (cluster table functions) as the CLI would send them, not through the read path. */
  const rows = async <T>(sql: string, params: Record<string, unknown> = {}): Promise<T[]> => {
    const result = await rt.engine.client.query({
      query: sql,
      query_params: params,
      format: 'JSONEachRow',
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
    })
    return result.json<T>()
  }

  /** Waits until every replica has fetched what its shard received. */
  async function synced(table: string) {
    await rt.engine.client.command({ query: `SYSTEM SYNC REPLICA ON CLUSTER 'quarry' ${database}.${table}` })
  }

  it('creates the layout on every server', async () => {
    const tables = await rows<{ host: string; name: string; engine: string }>(
      `SELECT hostName() AS host, name, engine FROM clusterAllReplicas('quarry', system.tables)
       WHERE database = {db:String} ORDER BY host, name`,
      { db: database },
    )
    const expected = {
      events: 'Distributed',
      events_local: 'ReplicatedMergeTree',
      sessions: 'Distributed',
      sessions_local: 'ReplicatedAggregatingMergeTree',
      sessions_mv: 'MaterializedView',
      session_timeline: 'Distributed',
      session_timeline_local: 'ReplicatedMergeTree',
      session_timeline_mv: 'MaterializedView',
      projects: 'ReplicatedReplacingMergeTree',
      clients: 'ReplicatedReplacingMergeTree',
      profiles: 'ReplicatedReplacingMergeTree',
      event_meta: 'ReplicatedReplacingMergeTree',
      quarry_settings: 'ReplicatedMergeTree',
      schema_migrations: 'ReplicatedMergeTree',
    }
    for (const node of NODES) {
      const mine = Object.fromEntries(tables.filter((t) => t.host === node).map((t) => [t.name, t.engine]))
      expect(mine, node).toEqual(expected)
    }
  })

  it('keeps every event of a session on one shard, and both shards in use', async () => {
    const perShard = await rows<{ shard: number; n: number }>(
      'SELECT _shard_num AS shard, count() AS n FROM events GROUP BY shard ORDER BY shard',
    )
    expect(perShard.map((r) => r.shard)).toEqual([1, 2])
    expect(perShard.reduce((s, r) => s + r.n, 0)).toBe(buildEvents().length)
    const split = await rows<{ n: number }>(
      `SELECT count() AS n FROM (
         SELECT project_id, session_id FROM events WHERE session_id != ''
         GROUP BY project_id, session_id HAVING uniqExact(_shard_num) > 1)`,
    )
    expect(split).toEqual([{ n: 0 }])
  })

  it('replicates within a shard, and the small tables to every server', async () => {
    await synced('events_local')
    await synced('projects')
    const events = await rows<{ host: string; n: number }>(
      `SELECT hostName() AS host, count() AS n FROM clusterAllReplicas('quarry', currentDatabase(), 'events_local') GROUP BY host ORDER BY host`,
    )
    const n = Object.fromEntries(events.map((r) => [r.host, r.n]))
    expect(n['ch-s1r1']).toBe(n['ch-s1r2'])
    expect(n['ch-s2r1']).toBe(n['ch-s2r2'])
    const projects = await rows<{ host: string; n: number }>(
      `SELECT hostName() AS host, count() AS n FROM clusterAllReplicas('quarry', currentDatabase(), 'projects') GROUP BY host ORDER BY host`,
    )
    expect(projects).toEqual(NODES.map((host) => ({ host, n: Object.keys(PROJECTS).length })))
  })

  it('answers insights as one server does: metrics, pages, breakdowns, filters', async () => {
    const w30 = windowOf('2026-03-15T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC')
    const metrics = await get(U, 'metrics', { range: '30d', interval: 'day' })
    expect(metrics.status, JSON.stringify(metrics.body)).toBe(200)
    expect(metrics.body).toEqual(data.metrics(U, w30, 'day'))
    expect((await get(U, 'pages', { range: '30d', limit: '1000' })).body).toEqual(data.pages(U, w30))
    // A second page of pages: its top-N must be the cluster's, not each shard's.
    expect((await get(U, 'pages', { range: '30d', limit: '5', cursor: '2' })).body).toEqual(data.pages(U, w30).slice(5, 10))
    for (const dimension of ['referrer_name', 'country', 'entry_page', 'utm_source']) {
      expect((await get(U, dimension, { range: '30d', limit: '1000' })).body, dimension).toEqual(data.breakdown(U, dimension, w30))
    }
    const filters = [{ name: 'path', operator: 'startsWith' as const, value: ['/blog'] }]
    const filtered = await get(U, 'country', { range: '30d', limit: '1000', filters: JSON.stringify(filters) })
    expect(filtered.body).toEqual(data.breakdown(U, 'country', w30, filters))
  })

  it("exports a profile's events and its devices' anonymous ones, which lie on several shards", async () => {
    const events = buildEvents().filter((e) => e.project_id === U)
    const devicesOf = (profile: string) => new Set(events.filter((e) => e.profile_id === profile).map((e) => e.device_id))
    // An identified visitor whose devices also browsed anonymously.
    const profile = events
      .filter((e) => e.profile_id !== e.device_id && e.profile_id !== '')
      .map((e) => e.profile_id)
      .find((p) => events.some((e) => e.profile_id === e.device_id && devicesOf(p).has(e.device_id)))!
    expect(profile).toBeDefined()
    const devices = devicesOf(profile)
    const expected = events
      .filter((e) => e.profile_id === profile || (e.profile_id === e.device_id && devices.has(e.device_id)))
      .map((e) => e.id)
      .sort()
    const res = await app.request(
      `http://quarry.test/export/events?projectId=${U}&profileId=${encodeURIComponent(profile)}&format=ndjson&start=2024-01-01&end=2026-12-31`,
      { headers },
    )
    expect(res.status).toBe(200)
    const ids = (await res.text()).trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id).sort()
    expect(ids).toEqual(expected)
  })

  it('imports into the cluster once', async () => {
    await createProject(rt.runner, { id: 'imported', name: 'imported', timezone: 'UTC', organizationId: 'org-1' })
    const path = join(dir, 'events.ndjson')
    writeFileSync(
      path,
      buildEvents()
        .filter((e) => e.project_id === U)
        .map((e) => JSON.stringify(e))
        .join('\n'),
    )
    const first = await importFile(rt.engine, path, { projectId: 'imported', format: 'ndjson', onError: 'abort' })
    const total = buildEvents().filter((e) => e.project_id === U).length
    expect(first).toMatchObject({ imported: total, rejected: 0 })
    expect(await importFile(rt.engine, path, { projectId: 'imported', format: 'ndjson', onError: 'abort' })).toMatchObject({
      imported: 0,
      duplicates: total,
    })
    const w30 = windowOf('2026-03-15T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC')
    expect((await get('imported', 'metrics', { range: '30d', interval: 'day' })).body).toEqual(data.metrics(U, w30, 'day'))
  })
})
