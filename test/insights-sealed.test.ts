/**
 * Breakdowns and /metrics answered from the sealed history (src/services/sealed): through real
 * requests, the same numbers as the reference model computed from the inserted rows, over random
 * windows (whole local days and arbitrary instants), timezones (a DST change, half-hour offsets)
 * and filters; and the answers stay right when the data changes under a build (an insert before C,
 * a sealed session that gets an event after C, a re-import), read without the build until the next.
 *
 * The fixture is the Insights one plus sessions made for the seams: one that spans C (held), a
 * visitor who returns after C, a visitor first seen after C, a session without views across C.
 */
import { DateTime } from 'luxon'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventId, eventMaker, PROJECTS } from './fixtures/insights-data.ts'
import { createClientRow } from '../src/auth/clients.ts'
import { SealedHistory } from '../src/services/sealed/index.ts'
import { openInsights, queryString, requestAs, type Harness, type Query, type Reply } from './fixtures/insights-harness.ts'
import { testApp } from './helpers/runtime.ts'
import { Dataset, DIMENSION_NAMES, ms, type EventRow, type Filter, type Interval, type Window } from './fixtures/insights-model.ts'
import { seededRandom } from './helpers/random.ts'

const U = PROJECTS.utc.id
const S = PROJECTS.sthlm.id
/** C at the pinned clock (22:37 UTC on 14 April): the start of the last UTC hour over an hour old. */
const C = Date.parse('2026-04-14T21:00:00Z')

let h: Harness
/** The same app over a sealed history whose requests compute the live sessions themselves. */
let inline: (project: string, route: string, query: Query) => Promise<Reply>
let events: EventRow[]
let importedId = 750_000
const extra = eventMaker(700_000, { path: '/sx/a' })

const SEAMS: EventRow[] = [
  // Spans C: sealed as a held part, completed by every request.
  extra('sx-cross', 'sx-p1', '2026-04-14T20:40:00Z', { country: 'SE', city: 'Lund' }),
  extra('sx-cross', 'sx-p1', '2026-04-14T20:50:00Z', { name: 'revenue', revenue: 700, path: '' }),
  extra('sx-cross', 'sx-p1', '2026-04-14T21:05:00Z', { path: '/sx/b', country: 'NO' }),
  // Spans C without a view before it: its entry page comes from after C.
  extra('sx-noview', 'sx-p2', '2026-04-14T20:30:00Z', { name: 'click', path: '' }),
  extra('sx-noview', 'sx-p2', '2026-04-14T21:15:00Z', { path: '/sx/c' }),
  // Sealed whole, begun before 20:00 and paying after it: a filtered revenue from 20:00 counts it.
  extra('sx-pay', 'sx-p7', '2026-04-14T19:50:00Z', { country: 'SE' }),
  extra('sx-pay', 'sx-p7', '2026-04-14T20:10:00Z', { name: 'revenue', revenue: 450, path: '' }),
  // Sealed whole across a UTC midnight, paying after it: a window from that midnight counts its revenue, not the session.
  extra('sx-night', 'sx-p9', '2026-04-09T23:50:00Z', { country: 'SE', city: 'Lund' }),
  extra('sx-night', 'sx-p9', '2026-04-10T00:10:00Z', { name: 'revenue', revenue: 250, path: '', country: 'NO' }),
  // A visitor seen before C, back after it in a new session; one first seen after C.
  extra('sx-r1', 'sx-p3', '2026-04-12T10:00:00Z'),
  extra('sx-r2', 'sx-p3', '2026-04-14T21:30:00Z', { country: 'DK' }),
  extra('sx-new', 'sx-p4', '2026-04-14T22:00:00Z', { country: 'DK' }),
  extra('sx-new', 'sx-p4', '2026-04-14T22:10:00Z', { name: 'revenue', revenue: 300, path: '' }),
  // Revenue after C outside any session: no live session holds it, the window's revenue does.
  extra('', 'sx-p8', '2026-04-14T22:20:00Z', { name: 'revenue', revenue: 90, path: '' }),
]

async function insert(rows: EventRow[]): Promise<void> {
  await h.rt.engine.client.insert({ table: 'events', values: rows, format: 'JSONEachRow' })
  events.push(...rows)
}

const model = () => new Dataset(events)

async function seal(): Promise<void> {
  for (const p of [U, S]) await h.sealed!.build(p)
}

beforeAll(async () => {
  h = await openInsights({ sealed: true })
  events = [...h.data.events]
  await insert(SEAMS)
  await seal()
  const sealed = new SealedHistory({ runner: h.rt.runner, logger: h.rt.logger, now: () => h.clock.now, queryTimeoutS: 10, rebuildIntervalMs: 0, liveSnapshots: false, insertsTtlMs: 0 })
  const app = testApp(h.rt, { now: () => h.clock.now, sealed })
  const root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'root-inline' })
  inline = (project, route, query) => requestAs(app, `http://quarry.test/insights/${project}/${route}?${queryString(query)}`, root)
})
afterAll(async () => {
  await h?.dispose()
})

async function get(project: string, route: string, query: Query) {
  const res = await h.get(project, route, query)
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  const until = res.headers.get('x-quarry-sealed-until')
  return { body: res.body, sealedUntil: until === null ? null : Date.parse(until) }
}

const ZONES = ['UTC', 'Europe/Stockholm', 'Asia/Kolkata', 'America/New_York'] as const
const FILTERS: Filter[][] = [
  [],
  [{ name: 'country', operator: 'is', value: ['US', 'SE'] }],
  [{ name: 'path', operator: 'contains', value: ['/'] }],
  [{ name: 'browser', operator: 'isNot', value: ['Chrome'] }],
  // Event filters the build's postings answer (name, path), with a session filter and one they don't.
  [{ name: 'name', operator: 'is', value: ['revenue'] }, { name: 'country', operator: 'isNot', value: ['DE'] }],
  [{ name: 'path', operator: 'startsWith', value: ['/sx', '/pricing'] }, { name: 'properties.plan', operator: 'isNotNull', value: [] }],
  [{ name: 'path', operator: 'endsWith', value: ['/a', '/b', 'g'] }, { name: 'origin', operator: 'isNotNull', value: [] }],
]

interface Case {
  label: string
  project: string
  query: Query
  w: Window
  filters: Filter[]
}

/** Random windows of the fixture's span: whole local days, or instants to the millisecond. */
function cases(seed: number, n: number): Case[] {
  const rnd = seededRandom(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!
  const out: Case[] = []
  const first = Date.parse('2026-02-01T00:00:00Z')
  const last = Date.parse('2026-04-15T12:00:00Z')
  for (let i = 0; i < n; i++) {
    const timezone = pick(ZONES)
    const project = rnd() < 0.8 ? U : S
    const filters = pick(FILTERS)
    const a = first + Math.floor(rnd() * (C - first))
    const b = a + 1 + Math.floor(rnd() * (last - a))
    let start: DateTime
    let end: DateTime
    let query: Query
    if (rnd() < 0.5) {
      start = DateTime.fromMillis(a, { zone: timezone }).startOf('day')
      const endDay = DateTime.fromMillis(b, { zone: timezone }).startOf('day')
      end = endDay.plus({ days: 1 })
      query = { startDate: start.toISODate()!, endDate: endDay.toISODate()!, timezone }
    } else {
      start = DateTime.fromMillis(a, { zone: 'UTC' })
      end = DateTime.fromMillis(b + 1, { zone: 'UTC' })
      query = { startDate: start.toISO()!, endDate: DateTime.fromMillis(b, { zone: 'UTC' }).toISO()!, timezone }
    }
    if (filters.length > 0) query = { ...query, filters }
    const w: Window = { start: start.toMillis(), end: end.toMillis(), timezone }
    out.push({ label: `#${i} ${project} ${timezone} ${start.toISO()} → ${end.toISO()} ${JSON.stringify(filters)}`, project, query, w, filters })
  }
  return out
}

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

describe('event filters on the sealed history', () => {
  const query = { startDate: '2026-03-02T10:00:00Z', endDate: '2026-04-14T22:00:00Z' }
  // A request that only explains itself plans with what earlier requests checked: one runs first.
  const explained = async (filters: Filter[]) => {
    expect((await get(U, 'country', { ...query, filters })).sealedUntil).toBe(C)
    return (await h.get(U, 'country', { ...query, filters, explain: 'sql' })).body.sql.at(-1) as string
  }

  it("read the build's postings for the sealed sessions, and the events only from the held sessions' start on", async () => {
    const sql = await explained([{ name: 'path', operator: 'contains', value: ['/'] }])
    expect(sql).toContain('FROM sealed_event_postings')
    const scans = [...sql.matchAll(/FROM events WHERE .*? AND created_at >= (.*?) AND/g)].map((m) => m[1])
    expect(scans.length).toBeGreaterThan(0)
    for (const from of scans) expect(from).toMatch(/^greatest\(.*\{held_from:/)
  })

  it("rest on the build's session numbers: 1 to n over the sessions before C, a UTC day's a run after the day before's", async () => {
    const sessions = new Set(events.filter((e) => e.project_id === U && e.session_id !== '' && ms(e) < C).map((e) => e.session_id))
    // The table keeps each session's key, the hash of its id: the ids are found from the ones expected.
    const rows = await h.rt.runner.rows<{ id: string; sno: number; created_at: string }>(
      {
        name: 'numbers',
        sql: `SELECT ids.id AS id, sno, toString(created_at) AS created_at FROM sealed_sessions AS s
          LEFT JOIN (SELECT arrayJoin({ids:Array(String)}) AS id) AS ids ON s.session_key = reinterpretAsUInt128(sipHash128(ids.id))
          WHERE project_id = {p:String} AND version = (SELECT max(version) FROM sealed_builds WHERE project_id = {p:String}) ORDER BY sno`,
        params: { p: U, ids: [...sessions] },
      },
      { timeoutS: 10 },
    )
    expect(rows.length).toBe(sessions.size)
    expect(new Set(rows.map((r) => r.id))).toEqual(sessions)
    expect(rows.map((r) => r.sno)).toEqual(rows.map((_, i) => i + 1))
    const days = rows.map((r) => r.created_at.slice(0, 10))
    expect(days).toEqual([...days].sort())
  })

  it('scan the events from the window\'s start where the postings hold no such column', async () => {
    const sql = await explained([{ name: 'properties.plan', operator: 'isNotNull', value: [] }])
    expect(sql).not.toContain('sealed_event_postings')
    expect(sql).toMatch(/FROM events WHERE .*? AND created_at >= \{earliest:/)
  })
})

describe('/pages from the sealed history', () => {
  // Every window is answered from it (whole days, zones' midnights and instants), and a filtered one
  // when each filter is on a view's own origin, path or name or on a session attribute.
  const SESSION_NAMES = ['country', 'browser']
  const onViews = (filters: Filter[]) => filters.every((f) => ['path', 'origin', 'name'].includes(f.name) || SESSION_NAMES.includes(f.name))
  for (const c of cases(31, 16)) {
    it(c.label, async () => {
      const expected = model().pages(c.project, c.w, c.filters)
      const query = { ...(c.query as object), limit: 1000 }
      const res = await get(c.project, 'pages', query)
      expect(res.sealedUntil).toBe(onViews(c.filters) ? C : null)
      expect(res.body).toEqual(expected)
      const computed = await inline(c.project, 'pages', query)
      expect(computed.body).toEqual(expected)
    })
  }
})

describe('when the data changes under a build', () => {
  const W30: Window = { start: Date.parse('2026-03-15T00:00:00Z'), end: Date.parse('2026-04-15T00:00:00Z'), timezone: 'UTC' }
  const check = async (sealed: boolean) => {
    for (const dimension of ['country', 'exit_page', 'entry_page']) {
      const res = await get(U, dimension, { range: '30d', limit: 1000 })
      expect(res.sealedUntil !== null, dimension).toBe(sealed)
      expect(res.body, dimension).toEqual(model().breakdown(U, dimension, W30))
      const computed = await inline(U, dimension, { range: '30d', limit: 1000 })
      expect(computed.headers.get('x-quarry-sealed-until') !== null, dimension).toBe(sealed)
      expect(computed.body, dimension).toEqual(res.body)
    }
    const pages = await get(U, 'pages', { range: '30d', limit: 1000 })
    expect(pages.sealedUntil !== null, 'pages').toBe(sealed)
    expect(pages.body, 'pages').toEqual(model().pages(U, W30))
    expect((await inline(U, 'pages', { range: '30d', limit: 1000 })).body, 'pages').toEqual(pages.body)
    const m = await get(U, 'metrics', { range: '30d' })
    expect(m.sealedUntil !== null).toBe(sealed)
    expect(m.body).toEqual(model().metrics(U, W30, 'day'))
  }

  it('a late insert before C: answered from sessions until the next build, then sealed again', async () => {
    await insert([extra('sx-late', 'sx-p5', '2026-04-13T09:00:00Z', { country: 'FI' })])
    await check(false)
    await seal()
    await check(true)
  })

  it('an event after C for a session sealed whole: answered from sessions until the next build', async () => {
    await insert([extra('sx-r1', 'sx-p3', '2026-04-14T21:45:00Z', { path: '/sx/z' })])
    await check(false)
    await seal()
    await check(true)
  })

  it('a new session after C keeps the build: it is read live', async () => {
    await insert([extra('sx-live', 'sx-p6', '2026-04-14T22:20:00Z', { country: 'IS' })])
    await check(true)
  })

  it('an event after C for a session sealed whole, earlier than one verified before it: found all the same', async () => {
    // The check after an insert reads the events of the inserts logged since the last verified one,
    // from the earliest of them: here before the live event verified by the test above.
    await insert([extra('sx-pay', 'sx-p7', '2026-04-14T21:10:00Z', { country: 'SE' })])
    await check(false)
    await seal()
    await check(true)
  })

  it('an import of older events: answered from sessions, then sealed again', async () => {
    // A session imported again under another id, as an import of an older export would.
    const again = events.filter((e) => e.project_id === U && e.session_id === 'sx-cross' && ms(e) < C)
    expect(again.length).toBeGreaterThan(1)
    await insert(again.map((e) => ({ ...e, id: eventId(++importedId), session_id: 'sx-cross-imported' })))
    await check(false)
    await seal()
    await check(true)
  })
})

describe('the insert count', () => {
  const queries = (res: Reply) => Number(/queries=(\d+)/.exec(res.headers.get('x-quarry-stats') ?? '')?.[1])
  it('is read once per insertsTtlMs: a request within it plans without the read, one after it reads again', async () => {
    // The clock stands still but for the steps below, so a slow machine cannot carry a request
    // past the TTL between them.
    let now = 0
    const realNow = Date.now
    const start = realNow()
    Date.now = () => start + now
    try {
      const sealed = new SealedHistory({ runner: h.rt.runner, logger: h.rt.logger, now: () => h.clock.now, queryTimeoutS: 10, rebuildIntervalMs: 0, insertsTtlMs: 1_000 })
      const app = testApp(h.rt, { now: () => h.clock.now, sealed })
      const root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'root-ttl' })
      const ask = () => requestAs(app, `http://quarry.test/insights/${U}/country?range=30d`, root)
      const first = await ask()
      expect(first.headers.get('x-quarry-sealed-until')).not.toBeNull()
      now += 500
      const within = await ask()
      expect(within.headers.get('x-quarry-sealed-until')).not.toBeNull()
      // The newest build (trusted 5 s), the insert count and the verified live sessions are known: only the statement runs.
      expect(queries(within)).toBe(1)
      now += 600
      const after = await ask()
      expect(queries(after)).toBe(2)
      expect(after.body).toEqual(within.body)
    } finally {
      Date.now = realNow
    }
  })
})

describe('the live sessions', () => {
  it('are written once the build is verified and read from there; explained, the statement shows the stamp it reads', async () => {
    await get(U, 'country', { range: '30d' })
    await h.sealed!.snapshotsWritten(U)
    const explained = await h.get(U, 'country', { range: '30d', explain: 'sql' })
    expect(explained.status, JSON.stringify(explained.body)).toBe(200)
    expect(explained.body.params.stamp).toBeGreaterThan(0)
    expect(explained.body.sql.at(-1)).toContain('FROM sealed_live')
    const [row] = await (
      await h.rt.engine.client.query({
        query: 'SELECT count() AS n FROM sealed_live WHERE project_id = {p:String} AND stamp = {s:UInt64}',
        query_params: { p: U, s: explained.body.params.stamp },
        format: 'JSONEachRow',
      })
    ).json<{ n: number }>()
    const live = new Set(events.filter((e) => e.project_id === U && ms(e) >= C && e.session_id !== '').map((e) => e.session_id))
    expect(Number(row!.n)).toBe(live.size)
  })

  it('are written a part at a time, by the first request that reads it: a breakdown writes neither the events, /pages\' part nor the profiles', async () => {
    const sealed = new SealedHistory({ runner: h.rt.runner, logger: h.rt.logger, now: () => h.clock.now, queryTimeoutS: 10, rebuildIntervalMs: 0 })
    const app = testApp(h.rt, { now: () => h.clock.now, sealed })
    const root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'root-parts' })
    const explain = (route: string, query: Query) => requestAs(app, `http://quarry.test/insights/${U}/${route}?${queryString(query)}`, root)
    // A request does not wait for the write it starts: the next one reads it once it is written.
    const ask = async (route: string, query: Query) => {
      const res = await explain(route, query)
      await sealed.snapshotsWritten(U)
      return res
    }
    /** Which snapshot tables the request's statement reads, as explain=sql lists it. */
    const reads = async (route: string, query: Record<string, string>) => {
      const explained = await explain(route, { ...query, explain: 'sql' })
      expect(explained.status, JSON.stringify(explained.body)).toBe(200)
      const sql = (explained.body.sql as string[]).join('\n')
      return ['sealed_live_events', 'sealed_live_pages', 'sealed_live_profiles', 'sealed_live'].filter((table) => new RegExp(`FROM ${table}\\b`).test(sql))
    }
    const routes = { country: { range: '30d' }, metrics: { range: '30d' }, pages: { range: '30d' }, engagement: {} as Record<string, string> }
    const stamp = async () => (await explain('country', { ...routes.country, explain: 'sql' })).body.params.stamp as number
    const before = await explain('country', routes.country)
    expect(before.status).toBe(200)
    // Answered without waiting for the write it started: it computed the live sessions itself.
    expect((await explain('country', { ...routes.country, explain: 'sql' })).body.params.stamp).toBeUndefined()
    await sealed.snapshotsWritten(U)
    expect(await reads('country', routes.country)).toEqual(['sealed_live'])
    const written = await stamp()
    // /metrics' revenue after C comes from the events' part, which the breakdown did not write.
    expect(await reads('metrics', routes.metrics)).toEqual(['sealed_live'])
    expect((await ask('metrics', routes.metrics)).status).toBe(200)
    expect(await reads('metrics', routes.metrics)).toEqual(['sealed_live_events', 'sealed_live'])
    expect(await reads('pages', routes.pages)).toEqual([])
    expect(await reads('engagement', routes.engagement)).toEqual([])
    expect((await ask('pages', routes.pages)).status).toBe(200)
    expect(await reads('pages', routes.pages)).toEqual(['sealed_live_pages'])
    expect(await reads('engagement', routes.engagement)).toEqual([])
    expect((await ask('engagement', routes.engagement)).status).toBe(200)
    expect(await reads('engagement', routes.engagement)).toEqual(['sealed_live_profiles'])
    // The live sessions were written once: the breakdown reads them under the same stamp.
    const again = await ask('country', routes.country)
    expect(again.body).toEqual(before.body)
    expect(await stamp()).toBe(written)
  })

  it('computed by each request, give the same answers as written', async () => {
    for (const c of cases(29, 4)) {
      const query = { ...(c.query as object), limit: 1000 }
      const computed = await inline(c.project, 'city', query)
      expect(computed.headers.get('x-quarry-sealed-until')).not.toBeNull()
      expect(computed.body, c.label).toEqual(model().breakdown(c.project, 'city', c.w, c.filters))
      expect(computed.body, c.label).toEqual((await get(c.project, 'city', query)).body)
    }
  })
})

describe('visitors are exact', () => {
  it('equal uniqExact over the raw events for the sealed window', async () => {
    const res = await get(U, 'metrics', { range: '3m' })
    expect(res.sealedUntil).toBe(C)
    const [row] = await (
      await h.rt.engine.client.query({
        query: `SELECT uniqExact(visitor) AS n FROM (
            SELECT min(created_at) AS started, tupleElement(min((created_at, profile_id)), 2) AS visitor
            FROM events WHERE project_id = {p:String} AND session_id != '' GROUP BY session_id)
          WHERE started >= {from:DateTime64(3, 'UTC')} AND started < {to:DateTime64(3, 'UTC')}`,
        query_params: { p: U, from: '2026-01-14 00:00:00.000', to: '2026-04-15 00:00:00.000' },
        format: 'JSONEachRow',
      })
    ).json<{ n: number }>()
    expect(res.body.metrics.unique_visitors).toBeGreaterThan(0)
    expect(res.body.metrics.unique_visitors).toBe(Number(row!.n))
  })

  it("equal uniqExact over the raw events for each page's viewers, in a window through C", async () => {
    const res = await get(U, 'pages', { startDate: '2026-02-03T05:30:00Z', endDate: '2026-04-14T22:00:00Z', limit: 1000 })
    expect(res.sealedUntil).toBe(C)
    const rows = await (
      await h.rt.engine.client.query({
        query: `SELECT origin, path, uniqExact(profile_id) AS n FROM events
          WHERE project_id = {p:String} AND name = 'screen_view' AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
          GROUP BY origin, path`,
        query_params: { p: U, from: '2026-02-03 05:30:00.000', to: '2026-04-14 22:00:00.001' },
        format: 'JSONEachRow',
      })
    ).json<{ origin: string; path: string; n: number }>()
    const exact = new Map(rows.map((r) => [`${r.origin} ${r.path}`, Number(r.n)]))
    expect(res.body.length).toBe(exact.size)
    for (const page of res.body as { origin: string; path: string; visitors: number }[]) expect(page.visitors, page.path).toBe(exact.get(`${page.origin} ${page.path}`))
  })
})
