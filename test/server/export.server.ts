/** /export/events streamed from a ClickHouse server: every event once, newest first, in both formats. */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildEvents, PROJECTS } from '../fixtures/insights-data.ts'
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
})
