/** Insights over HTTP on a ClickHouse server, against the same reference model as the embedded tests. */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { PROJECTS } from '../fixtures/insights-data.ts'
import { windowOf } from '../fixtures/insights-model.ts'
import { describeServer, openServerInsights, type ServerInsights } from './helpers.ts'

const U = PROJECTS.utc.id
const S = PROJECTS.sthlm.id

describeServer('insights on a server', () => {
  let h: ServerInsights
  beforeAll(async () => {
    h = await openServerInsights('insights')
  })
  afterAll(async () => {
    await h?.dispose()
  })

  it('metrics: 7d on the UTC project, totals and day buckets', async () => {
    const res = await h.get(U, 'metrics')
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual(h.data.metrics(U, windowOf('2026-04-07T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC'), 'day'))
    expect(res.body.metrics.total_sessions).toBeGreaterThan(30)
    expect(res.headers.get('server-timing')).toMatch(/^db;dur=/)
    // A server tells what a statement read (chDB does not): at least the sessions counted.
    const read = /^rows_read=(\d+); bytes_read=(\d+); queries=\d+$/.exec(res.headers.get('x-quarry-stats') ?? '')
    expect(Number(read?.[1])).toBeGreaterThanOrEqual(res.body.metrics.total_sessions)
    expect(Number(read?.[2])).toBeGreaterThan(0)
  })

  it('metrics: Stockholm over the DST change, hourly', async () => {
    const res = await h.get(S, 'metrics', { startDate: '2026-03-29', endDate: '2026-03-29', interval: 'hour' })
    expect(res.status).toBe(200)
    const w = windowOf('2026-03-29T00:00:00+01:00', '2026-03-30T00:00:00+02:00', 'Europe/Stockholm')
    expect(res.body).toEqual(h.data.metrics(S, w, 'hour'))
    expect(res.body.series).toHaveLength(23)
  })

  it('a breakdown: referrer_name over 30 days, and country with an event filter', async () => {
    const w = windowOf('2026-03-15T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC')
    const res = await h.get(U, 'referrer_name', { range: '30d', limit: 1000 })
    expect(res.status).toBe(200)
    expect(res.body).toEqual(h.data.breakdown(U, 'referrer_name', w))
    const filters = [{ name: 'path', operator: 'startsWith' as const, value: ['/blog'] }]
    const country = await h.get(U, 'country', { range: '30d', limit: 1000, filters })
    expect(country.body).toEqual(h.data.breakdown(U, 'country', w, filters))
  })

  it('pages', async () => {
    const w = windowOf('2026-03-15T00:00:00Z', '2026-04-15T00:00:00Z', 'UTC')
    const res = await h.get(U, 'pages', { range: '30d', limit: 1000 })
    expect(res.body).toEqual(h.data.pages(U, w))
  })
})
