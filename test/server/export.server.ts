/** /export/events streamed from a ClickHouse server: every event once, newest first, in every format. */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createClientRow } from '../../src/auth/clients.ts'
import { buildEvents, NOW, PROJECTS } from '../fixtures/insights-data.ts'
import { testApp } from '../helpers/runtime.ts'
import { readArrowStream, readParquet } from '../support/columnar-readers.ts'
import { describeServer, openServerInsights, type ServerInsights } from './helpers.ts'

const U = PROJECTS.utc.id

describeServer('export on a server', () => {
  let h: ServerInsights
  beforeAll(async () => {
    h = await openServerInsights('export')
  })
  afterAll(async () => {
    await h?.dispose()
  })

  const expected = () =>
    buildEvents()
      .filter((e) => e.project_id === U)
      .sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? 1 : -1))

  it('streams NDJSON: every event of the project, newest first, with the includes', async () => {
    const res = await h.fetch(`http://quarry.test/export/events?projectId=${U}&format=ndjson&includes=properties,referrer&start=2024-01-01&end=2026-12-31`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/)
    const lines = String(res.body).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
    const want = expected()
    expect(lines.map((l) => l.id)).toEqual(want.map((e) => e.id))
    expect(lines.map((l) => l.properties)).toEqual(want.map((e) => e.properties ?? {}))
    expect(lines.map((l) => l.referrerName)).toEqual(want.map((e) => e.referrer_name ?? ''))
    expect(new Set(lines.map((l) => l.projectId))).toEqual(new Set([U]))
  })

  it('streams CSV with one header', async () => {
    const res = await h.fetch(`http://quarry.test/export/events?projectId=${U}&format=csv&start=2024-01-01&end=2026-12-31`)
    expect(res.status).toBe(200)
    const text = String(res.body)
    expect(text.split('\n').filter((l) => l.startsWith('"id","name"'))).toHaveLength(1)
  })

  /** The bytes of an export, as a client receives them: the server writes one file across arbitrary chunks. */
  async function binary(query: string, method = 'GET') {
    const app = testApp(h.rt, { now: () => NOW })
    const root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: `root-${Math.random()}` })
    const res = await app.request(`http://quarry.test/export/events?projectId=${U}&start=2024-01-01&end=2026-12-31&${query}`, {
      method,
      headers: { 'openpanel-client-id': root.id, 'openpanel-client-secret': root.secret },
    })
    return { res, body: new Uint8Array(await res.arrayBuffer()) }
  }

  it('streams Parquet and Arrow: one valid file each, every event in order, typed columns', async () => {
    const want = expected().map((e) => e.id)
    const parquet = await binary('format=parquet&includes=properties')
    expect(parquet.res.status).toBe(200)
    const p = await readParquet(parquet.body)
    expect(p.rows.map((r) => r.id)).toEqual(want)
    expect(p.types).toMatchObject({ createdAt: 'TIMESTAMP WITH TIME ZONE', properties: 'MAP(VARCHAR, VARCHAR)', duration: 'UBIGINT' })
    const arrow = await binary('format=arrow&includes=properties')
    expect(arrow.res.status).toBe(200)
    const a = readArrowStream(arrow.body)
    expect(a.rows.map((r) => r.id)).toEqual(want)
    expect(a.types).toMatchObject({ createdAt: 'Timestamp<MILLISECOND, UTC>', properties: 'Map<{key:Utf8, value:Utf8}>' })
  })

  it('resumes after an event and counts with HEAD', async () => {
    const want = expected().map((e) => e.id)
    const resumed = readArrowStream((await binary(`format=arrow&after=${want[9]}`)).body)
    expect(resumed.rows.map((r) => r.id)).toEqual(want.slice(10))
    const head = await binary('format=parquet', 'HEAD')
    expect(head.res.headers.get('x-quarry-rows')).toBe(String(want.length))
  })
})
