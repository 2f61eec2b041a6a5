/**
 * Breakdowns and /metrics answered from the sealed history (src/services/sealed): through real
 * requests, the same numbers as the reference model computed from the inserted rows, over random
 * windows (whole local days and arbitrary instants), timezones (a DST change, half-hour offsets)
 * and filters (test/fixtures/sealed-seams.ts). Event filters, /pages and data that changes under a
 * build: test/insights-sealed-changes.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { C, cases, events, FILTERS, get, h, model, U, S, useSealedSeams, type Case } from './fixtures/sealed-seams.ts'
import type { Query } from './fixtures/insights-harness.ts'
import { DIMENSION_NAMES, ms, type Filter, type Interval, type Window } from './fixtures/insights-model.ts'

useSealedSeams()

describe('the fixture reaches the seams of a build', () => {
  it('has a session across C, a returning visitor after C and one first seen after it', () => {
    const byId = (id: string) => events.filter((e) => e.session_id === id)
    expect(byId('sx-cross').some((e) => ms(e) < C) && byId('sx-cross').some((e) => ms(e) >= C)).toBe(true)
    const before = new Set(events.filter((e) => e.project_id === U && ms(e) < C).map((e) => e.profile_id))
    const after = events.filter((e) => e.project_id === U && ms(e) >= C).map((e) => e.profile_id)
    expect(after.some((p) => before.has(p))).toBe(true)
    expect(after.some((p) => !before.has(p))).toBe(true)
  })
})

describe('breakdowns from the sealed history', () => {
  // Every dimension in turn, six per window (entry and exit pages, which live sessions can change, in each).
  const rest = DIMENSION_NAMES.filter((d) => d !== 'entry_page' && d !== 'exit_page')
  cases(19, 12).forEach((c, i) => {
    const dimensions = ['entry_page', 'exit_page', ...[0, 1, 2, 3].map((k) => rest[(4 * i + k) % rest.length]!)]
    it(c.label, async () => {
      const data = model()
      for (const dimension of dimensions) {
        const res = await get(c.project, dimension, { ...(c.query as object), limit: 1000 })
        expect(res.sealedUntil, dimension).toBe(C)
        expect(res.body, dimension).toEqual(data.breakdown(c.project, dimension, c.w, c.filters))
      }
    })
  })
})

describe('breakdowns filtered on their own dimension, from the rollups', () => {
  // Each filter set on the dimension's value or its prefix (a city's country), and one that is not.
  const OWN: [string, Filter[]][] = [
    ['country', [{ name: 'country', operator: 'is', value: ['US', 'SE'] }]],
    ['browser', [{ name: 'browser', operator: 'isNot', value: ['Chrome'] }]],
    ['city', [{ name: 'country', operator: 'isNot', value: ['DE'] }]],
    ['region', [{ name: 'country', operator: 'is', value: ['US', 'SE'] }, { name: 'region', operator: 'isNotNull', value: [] }]],
    ['country', [{ name: 'country', operator: 'isNot', value: ['DE'] }, { name: 'browser', operator: 'is', value: ['Chrome'] }]],
  ]
  cases(29, 6).forEach((c, i) => {
    it(c.label.replace(/ \[.*$/, ''), async () => {
      const data = model()
      for (const [dimension, filters] of [OWN[i % OWN.length]!, OWN[(i + 2) % OWN.length]!]) {
        const res = await get(c.project, dimension, { ...(c.query as object), filters, limit: 1000 })
        expect(res.sealedUntil, dimension).toBe(C)
        expect(res.body, `${dimension} ${JSON.stringify(filters)}`).toEqual(data.breakdown(c.project, dimension, c.w, filters))
      }
    })
  })

  it('a window of whole UTC days reads no sealed session, unless a filter is on another dimension', async () => {
    const sql = async (dimension: string, filters: Filter[]) => (await h.get(U, dimension, { range: '30d', filters, explain: 'sql' })).body.sql.at(-1)
    expect(await sql('country', OWN[0]![1])).not.toContain('FROM sealed_sessions')
    expect(await sql('city', OWN[2]![1])).not.toContain('FROM sealed_sessions')
    expect(await sql('country', OWN[4]![1])).toContain('FROM sealed_sessions')
  })
})

describe('/metrics from the sealed history', () => {
  const INTERVALS: Interval[] = ['hour', 'day', 'week', 'month']
  // Besides the random windows, two whose hours the buckets and the window's start split: a
  // half-hour zone's midnights, and instants off the hour (with the previous window's split too).
  const split: Case[] = [
    { label: 'Kolkata 30d', project: U, query: { range: '30d', timezone: 'Asia/Kolkata' }, w: { start: Date.parse('2026-03-16T00:00:00+05:30'), end: Date.parse('2026-04-16T00:00:00+05:30'), timezone: 'Asia/Kolkata' }, filters: [] },
    { label: 'instants off the hour', project: U, query: { startDate: '2026-03-20T07:13:00Z', endDate: '2026-04-13T16:41:00Z' }, w: { start: Date.parse('2026-03-20T07:13:00Z'), end: Date.parse('2026-04-13T16:41:00Z') + 1, timezone: 'UTC' }, filters: [] },
  ]
  for (const c of [...cases(23, 16).filter((x) => x.filters.length === 0), ...split]) {
    it(c.label, async () => {
      const data = model()
      const days = (c.w.end - c.w.start) / 86_400_000
      for (const interval of INTERVALS.filter((i) => i !== 'hour' || days <= 40)) {
        const res = await get(c.project, 'metrics', { ...(c.query as object), interval, previous: 'true' })
        expect(res.sealedUntil, interval).toBe(C)
        const previous: Window = { start: 2 * c.w.start - c.w.end, end: c.w.start, timezone: c.w.timezone }
        expect(res.body, interval).toEqual({ ...data.metrics(c.project, c.w, interval), previous: data.metricValues(c.project, previous) })
      }
    })
  }

  const FIXED: [string, string, Query, Window][] = [
    ['UTC 30d', U, { range: '30d' }, { start: Date.parse('2026-03-15T00:00:00Z'), end: Date.parse('2026-04-15T00:00:00Z'), timezone: 'UTC' }],
    ['UTC today, hours', U, { range: 'today', interval: 'hour' }, { start: Date.parse('2026-04-14T00:00:00Z'), end: Date.parse('2026-04-15T00:00:00Z'), timezone: 'UTC' }],
    ['Stockholm 30d, over DST', S, { range: '30d' }, { start: Date.parse('2026-03-16T00:00:00+01:00'), end: Date.parse('2026-04-16T00:00:00+02:00'), timezone: 'Europe/Stockholm' }],
    ['Kolkata 7d (half-hour offset)', U, { range: '7d', timezone: 'Asia/Kolkata' }, { start: Date.parse('2026-04-08T00:00:00+05:30'), end: Date.parse('2026-04-16T00:00:00+05:30'), timezone: 'Asia/Kolkata' }],
  ]
  for (const [label, project, query, w] of FIXED) {
    it(label, async () => {
      const interval = ((query as Record<string, string>).interval ?? 'day') as Interval
      const res = await get(project, 'metrics', query)
      expect(res.sealedUntil).toBe(C)
      expect(res.body).toEqual(model().metrics(project, w, interval))
    })
  }

  it('a breakdown over 30 days unions 8-day blocks of the rollups, C\'s own day and block included', async () => {
    const { params, sql } = (await h.get(U, 'country', { range: '30d', explain: 'sql' })).body
    expect(params.rollup_from <= params.long_from && params.long_from < params.long_to).toBe(true)
    // The rollups hold nothing from C on, so the day and the block that C falls in count whole.
    expect(params.rollup_to > params.closed && params.long_to > params.closed).toBe(true)
    // A window of whole UTC days that reaches C leaves no part to the sealed sessions.
    expect(sql.at(-1)).not.toContain('FROM sealed_sessions')
    const kolkata = (await h.get(U, 'country', { range: '30d', timezone: 'Asia/Kolkata', explain: 'sql' })).body.sql
    expect(kolkata.at(-1)).toContain('FROM sealed_sessions')
  })

  it('adds whole hours from the hourly totals but those the buckets split, and none for hourly buckets off the hour', async () => {
    const explained = async (query: Query) => (await h.get(U, 'metrics', { ...(query as object), explain: 'sql' })).body
    const utc = (await explained({ range: '30d' })).params
    expect(utc.rollup_from < utc.rollup_to && utc.holes === undefined).toBe(true)
    const kolkata = await explained({ range: '30d', timezone: 'Asia/Kolkata' })
    expect(kolkata.params.rollup_from < kolkata.params.rollup_to).toBe(true)
    // Each local midnight (18:30 UTC) splits an hour, read from the sealed sessions instead.
    expect(kolkata.params.holes.length).toBe(30)
    expect(kolkata.params.holes.every((t: string) => t.endsWith(' 18:00:00'))).toBe(true)
    expect(kolkata.sql.at(-1)).toContain('FROM sealed_sessions')
    // Whole hours from the window's start to C leave only the revenue from C on, written with the
    // live sessions by a request (in the background: the explained one reads it once written).
    await h.get(U, 'metrics', { range: '30d' })
    await h.sealed!.snapshotsWritten(U)
    const reaching = (await explained({ range: '30d' })).sql.at(-1)
    expect(reaching).toContain('FROM sealed_live_events')
    expect(reaching).not.toMatch(/FROM events\b/)
    expect(kolkata.sql.at(-1)).toMatch(/FROM events\b/)
    const hourly = (await explained({ range: '7d', timezone: 'Asia/Kolkata', interval: 'hour' })).params
    expect(hourly.rollup_from).toBe(hourly.rollup_to)
  })

  it("takes the totals' whole UTC days from their day rows, C's day whole, where every bucket starts on a UTC midnight", async () => {
    const explained = async (query: Query) => (await h.get(U, 'metrics', { ...(query as object), explain: 'sql' })).body.params
    for (const interval of ['day', 'week', 'month']) {
      const utc = await explained({ range: '30d', interval, previous: 'true' })
      expect(utc.rollup_from <= utc.long_from && utc.long_from < utc.long_to, interval).toBe(true)
      expect(utc.long_to > utc.closed && utc.rollup_to === utc.closed, interval).toBe(true)
    }
    // Hourly buckets, and local midnights an hour or two off UTC's, split the days: hours only.
    for (const query of [{ range: '7d', interval: 'hour' }, { range: '30d', timezone: 'Europe/Stockholm' }]) {
      const split = await explained(query)
      expect(split.rollup_from < split.rollup_to && split.long_from === split.long_to, JSON.stringify(query)).toBe(true)
    }
  })

  // Revenue with filters: the revenue events of the sessions that pass them, sealed sessions that
  // began before the window and live ones (sx-cross pays before C, spans C and is from SE).
  // Filters all on the postings' columns (name, origin; path alone counts the page's own) keep the revenue events by their session's number.
  const ON_POSTINGS: Filter[][] = [
    [{ name: 'name', operator: 'is', value: ['click'] }],
    [{ name: 'name', operator: 'is', value: ['signup', 'scroll'] }, { name: 'origin', operator: 'isNotNull', value: [] }],
  ]
  for (const filters of [...FILTERS.filter((f) => f.length > 0), ...ON_POSTINGS]) {
    it(`with filters ${JSON.stringify(filters)}, revenue included`, async () => {
      const windows: [Query, Window][] = [
        [{ range: '30d' }, { start: Date.parse('2026-03-15T00:00:00Z'), end: Date.parse('2026-04-15T00:00:00Z'), timezone: 'UTC' }],
        [{ range: 'today' }, { start: Date.parse('2026-04-14T00:00:00Z'), end: Date.parse('2026-04-15T00:00:00Z'), timezone: 'UTC' }],
        [{ startDate: '2026-04-14T20:45:00Z', endDate: '2026-04-14T22:59:59.999Z' }, { start: Date.parse('2026-04-14T20:45:00Z'), end: Date.parse('2026-04-14T23:00:00Z'), timezone: 'UTC' }],
      ]
      for (const [query, w] of windows) {
        const interval: Interval = w.end - w.start > 86_400_000 ? 'day' : 'hour'
        const res = await get(U, 'metrics', { ...(query as object), filters, interval })
        expect(res.sealedUntil).toBe(C)
        expect(res.body, JSON.stringify(query)).toEqual(model().metrics(U, w, interval, filters))
      }
    })
  }

  // Filters all on the page keep views and revenue events by their own page: from the page tables.
  const PAGE_ONLY = FILTERS.filter((f) => f.length > 0 && f.every((x) => x.name === 'path' || x.name === 'origin'))
  it('with filters on the page, in any zone, window and interval, the previous window included', async () => {
    expect(PAGE_ONLY.length).toBe(2)
    for (const c of cases(31, 10)) {
      const days = (c.w.end - c.w.start) / 86_400_000
      const previous: Window = { start: 2 * c.w.start - c.w.end, end: c.w.start, timezone: c.w.timezone }
      for (const filters of PAGE_ONLY) {
        for (const interval of (['hour', 'day', 'week'] as Interval[]).filter((i) => i !== 'hour' || days <= 40)) {
          const res = await get(c.project, 'metrics', { ...(c.query as object), filters, interval, previous: 'true' })
          expect(res.sealedUntil, c.label).toBe(C)
          const expected = { ...model().metrics(c.project, c.w, interval, filters), previous: model().metricValues(c.project, previous, filters) }
          expect(res.body, `${c.label} ${interval} ${JSON.stringify(filters)}`).toEqual(expected)
        }
      }
    }
  })

  it("with filters on the page, reads the views' day rows where buckets start on UTC midnights, and no event before C", async () => {
    const filters = PAGE_ONLY[0]
    const explained = async (query: Query) => (await h.get(U, 'metrics', { ...(query as object), filters, explain: 'sql' })).body
    const utc = await explained({ range: '30d' })
    expect(utc.params.view_days_from < utc.params.view_days_to && utc.params.view_days_to > utc.params.closed).toBe(true)
    expect(utc.sql.at(-1)).toContain('FROM sealed_page_revenue')
    const stockholm = await explained({ range: '30d', timezone: 'Europe/Stockholm' })
    expect(stockholm.params.view_days_from).toBe(stockholm.params.view_days_to)
  })

  it('counts the revenue of sessions that began before the window and pass the filter, sealed whole or held', async () => {
    const filters: Filter[] = [{ name: 'country', operator: 'is', value: ['SE'] }]
    const w: Window = { start: Date.parse('2026-04-14T20:00:00Z'), end: Date.parse('2026-04-14T23:00:00Z'), timezone: 'UTC' }
    expect(model().metricValues(U, w, filters).total_revenue).toBeGreaterThanOrEqual(450 + 700)
    const res = await get(U, 'metrics', { startDate: '2026-04-14T20:00:00Z', endDate: '2026-04-14T22:59:59.999Z', filters, interval: 'hour' })
    expect(res.sealedUntil).toBe(C)
    expect(res.body.metrics.total_revenue).toBe(model().metricValues(U, w, filters).total_revenue)
  })
})

const utc = (start: string, end: string): Window => ({ start: Date.parse(start), end: Date.parse(end), timezone: 'UTC' })
// Whole UTC days to C, from a midnight that sx-night crosses, and ending before C on a midnight.
const WHOLE_DAYS: [Query, Window][] = [
  [{ range: '30d' }, utc('2026-03-15T00:00:00Z', '2026-04-15T00:00:00Z')],
  [{ range: 'today' }, utc('2026-04-14T00:00:00Z', '2026-04-15T00:00:00Z')],
  [{ startDate: '2026-04-10', endDate: '2026-04-14' }, utc('2026-04-10T00:00:00Z', '2026-04-15T00:00:00Z')],
  [{ startDate: '2026-03-01', endDate: '2026-04-09' }, utc('2026-03-01T00:00:00Z', '2026-04-10T00:00:00Z')],
]

/** Filtered /metrics over each of WHOLE_DAYS, by day, week and month, with the previous window: as the model counts it. */
async function expectWholeDays(filters: Filter[]): Promise<void> {
  const data = model()
  for (const [query, w] of WHOLE_DAYS) {
    for (const interval of ['day', 'week', 'month'] as Interval[]) {
      const res = await get(U, 'metrics', { ...(query as object), filters, interval, previous: 'true' })
      expect(res.sealedUntil).toBe(C)
      const previous: Window = { start: 2 * w.start - w.end, end: w.start, timezone: 'UTC' }
      const expected = { ...data.metrics(U, w, interval, filters), previous: data.metricValues(U, previous, filters) }
      expect(res.body, `${JSON.stringify(query)} ${interval} ${JSON.stringify(filters)}`).toEqual(expected)
    }
  }
}

describe('/metrics filtered on one dimension, from its rollups', () => {
  // Each set on one dimension's value or its prefix (a region's country); the last on two dimensions.
  const OWN: Filter[][] = [
    [{ name: 'country', operator: 'is', value: ['US', 'SE'] }],
    [{ name: 'browser', operator: 'isNot', value: ['Chrome'] }],
    [{ name: 'country', operator: 'is', value: ['SE'] }, { name: 'region', operator: 'isNotNull', value: [] }],
    [{ name: 'city', operator: 'is', value: ['Lund'] }],
    [{ name: 'country', operator: 'isNot', value: ['DE'] }, { name: 'browser', operator: 'is', value: ['Chrome'] }],
  ]
  it('over whole UTC days, each bucket and the previous window', async () => {
    expect(model().metricValues(U, WHOLE_DAYS[2]![1], OWN[0]).total_revenue).toBeGreaterThanOrEqual(250)
    for (const filters of OWN) await expectWholeDays(filters)
  })

  cases(37, 8).forEach((c, i) => {
    it(c.label.replace(/ \[.*$/, ''), async () => {
      const data = model()
      const days = (c.w.end - c.w.start) / 86_400_000
      const filters = OWN[i % OWN.length]!
      for (const interval of (['hour', 'day'] as Interval[]).filter((x) => x !== 'hour' || days <= 40)) {
        const res = await get(c.project, 'metrics', { ...(c.query as object), filters, interval })
        expect(res.sealedUntil).toBe(C)
        expect(res.body, `${interval} ${JSON.stringify(filters)}`).toEqual(data.metrics(c.project, c.w, interval, filters))
      }
    })
  })

  it('reads no sealed session over whole UTC days, unless the days split or a filter is on another dimension', async () => {
    const sql = async (query: Query, filters: Filter[]) => (await h.get(U, 'metrics', { ...(query as object), filters, explain: 'sql' })).body.sql.at(-1)
    const days = await sql({ range: '30d' }, OWN[0]!)
    expect(days).not.toContain('FROM sealed_sessions')
    expect(days).toContain('FROM sealed_dimension_revenue')
    expect(await sql({ range: '30d' }, OWN[2]!)).not.toContain('FROM sealed_sessions')
    expect(await sql({ range: '30d', timezone: 'Europe/Stockholm' }, OWN[0]!)).toContain('FROM sealed_sessions')
    expect(await sql({ range: '7d', interval: 'hour' }, OWN[0]!)).toContain('FROM sealed_sessions')
    expect(await sql({ range: '30d' }, OWN[4]!)).toContain('FROM sealed_sessions')
  })
})

describe('/metrics filtered on events, from the session days', () => {
  // Each set on the postings' columns alone (the name, the path, the origin), one filter or two.
  const POSTED: Filter[][] = [
    [{ name: 'name', operator: 'is', value: ['revenue'] }],
    [{ name: 'path', operator: 'contains', value: ['/sx'] }],
    [{ name: 'name', operator: 'is', value: ['click', 'revenue'] }, { name: 'origin', operator: 'isNotNull', value: [] }],
    [{ name: 'path', operator: 'startsWith', value: ['/pricing', '/sx'] }, { name: 'name', operator: 'isNot', value: ['click'] }],
  ]
  it('over whole UTC days, each bucket and the previous window', async () => {
    for (const filters of POSTED) {
      expect(model().metricValues(U, WHOLE_DAYS[0]![1], filters).total_sessions, JSON.stringify(filters)).toBeGreaterThan(0)
      await expectWholeDays(filters)
    }
  })

  it('reads no sealed session over whole UTC days, unless the days split or a filter is on something else', async () => {
    const sql = async (query: Query, filters: Filter[]) => (await h.get(U, 'metrics', { ...(query as object), filters, explain: 'sql' })).body.sql.at(-1)
    for (const filters of POSTED) {
      const days = await sql({ range: '30d' }, filters)
      expect(days).not.toContain('FROM sealed_sessions')
      expect(days).toContain('FROM sealed_session_days')
    }
    expect(await sql({ range: '30d', timezone: 'Europe/Stockholm' }, POSTED[0]!)).toContain('FROM sealed_sessions')
    expect(await sql({ range: '7d', interval: 'hour' }, POSTED[0]!)).toContain('FROM sealed_sessions')
    expect(await sql({ range: '30d' }, [...POSTED[0]!, { name: 'country', operator: 'is', value: ['SE'] }])).not.toContain('FROM sealed_session_days')
  })
})
