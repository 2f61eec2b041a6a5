/**
 * End to end: a project's events exported as NDJSON through the API (root client), imported with
 * the importer into a fresh project, and every insights route answers the same for both.
 * The events are the Insights fixture's: sessions across midnight and DST, revenue, anonymous and
 * identified visitors, property keys and values with quotes, backslashes, % and non-ASCII text.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { importFile } from '../src/import/import.ts'
import { createProject } from '../src/projects.ts'
import { DIMENSIONS } from '../src/query/dimensions.ts'
import { buildEvents, PROJECTS } from './fixtures/insights-data.ts'
import { openInsights, type Harness, type Query } from './fixtures/insights-harness.ts'

let h: Harness
let dir: string
beforeAll(async () => {
  h = await openInsights()
  dir = mkdtempSync(join(tmpdir(), 'quarry-e2e-'))
}, 120_000)
afterAll(async () => {
  await h?.dispose()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

// OpenPanel's includes for a full event, plus revenue, which the metrics and breakdowns sum.
const INCLUDES = 'properties,geo,device,referrer,revenue'
const EXPORT_WINDOW = 'start=2024-01-01&end=2026-12-31'

async function exportNdjson(project: string): Promise<string> {
  const res = await h.fetch(`http://quarry.test/export/events?projectId=${project}&format=ndjson&includes=${INCLUDES}&${EXPORT_WINDOW}`)
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/)
  return String(res.body)
}

const ROUTES = ['metrics', 'pages', ...DIMENSIONS.map((d) => d.name)]

const QUERIES: [string, Query][] = [
  ['six weeks', { startDate: '2026-03-01', endDate: '2026-04-14' }],
  ['a year and a half', { startDate: '2024-12-31', endDate: '2026-04-14' }],
  ['one day', { startDate: '2026-04-11', endDate: '2026-04-11' }],
  ['a session filter', { startDate: '2026-03-01', endDate: '2026-04-14', filters: [{ name: 'country', operator: 'is', value: ['SE', 'DE'] }] }],
  ['an event filter', { startDate: '2026-03-01', endDate: '2026-04-14', filters: [{ name: 'path', operator: 'startsWith', value: ['/blog'] }] }],
]

describe.each([
  ['UTC', PROJECTS.utc],
  ['Europe/Stockholm', PROJECTS.sthlm],
])('export %s, import into a fresh project', (_label, source) => {
  const copy = `${source.id}-copy`
  let exported: string

  beforeAll(async () => {
    exported = await exportNdjson(source.id)
    await createProject(h.rt.runner, { id: copy, name: copy, timezone: source.timezone, organizationId: source.organizationId })
    const path = join(dir, `${source.id}.ndjson`)
    writeFileSync(path, exported)
    const result = await importFile(h.rt.engine, path, { projectId: copy, format: 'ndjson', onError: 'abort' })
    expect(result).toMatchObject({ rejected: 0, duplicates: 0, aborted: false })
  })

  it('moves every event of the project', () => {
    const expected = buildEvents().filter((e) => e.project_id === source.id).length
    expect(expected).toBeGreaterThan(100)
    expect(exported.trim().split('\n')).toHaveLength(expected)
  })

  it('exports the copy as the original, but for the project', async () => {
    const again = await exportNdjson(copy)
    const withoutProject = (text: string) =>
      text
        .trim()
        .split('\n')
        .map((line) => {
          const { projectId: _, ...rest } = JSON.parse(line) as Record<string, unknown>
          return rest
        })
    expect(withoutProject(again)).toEqual(withoutProject(exported))
  })

  async function same(route: string, query: Query) {
    const [a, b] = await Promise.all([h.get(source.id, route, query), h.get(copy, route, query)])
    expect(a.status, JSON.stringify(a.body)).toBe(200)
    expect(b.status, JSON.stringify(b.body)).toBe(200)
    expect(b.body).toEqual(a.body)
  }

  for (const [label, query] of QUERIES) {
    it.each(ROUTES)(`/%s answers the same (${label})`, async (route) => {
      await same(route, route === 'metrics' ? query : { ...(query as object), limit: 1000 })
    })
  }

  it('/metrics answers the same with daily buckets and the previous period', async () => {
    await same('metrics', { startDate: '2026-03-01', endDate: '2026-04-14', interval: 'day', previous: 'true' })
    await same('metrics', { range: '30d', interval: 'hour' })
  })

  it('/live answers the same', async () => {
    await same('live', {})
  })

  it('has something to compare', async () => {
    const metrics = await h.get(source.id, 'metrics', QUERIES[0]![1])
    expect(JSON.stringify(metrics.body)).toMatch(/"total_revenue":[1-9]/)
    const pages = await h.get(source.id, 'pages', { ...(QUERIES[0]![1] as object), limit: 1000 })
    expect(pages.body.length).toBeGreaterThan(5)
    for (const d of DIMENSIONS) {
      const res = await h.get(source.id, d.name, { ...(QUERIES[1]![1] as object), limit: 1000 })
      expect(res.body.length, d.name).toBeGreaterThan(0)
    }
  })
})
