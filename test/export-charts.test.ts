import { DateTime } from 'luxon'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../src/auth/clients.ts'
import { createProject } from '../src/projects.ts'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'
import type { EventRow as StoredEvent } from './helpers/event-row.ts'
import { seededRandom } from './helpers/random.ts'

// Expected values are computed here, in plain TypeScript, from the rows this file inserts.

const TZ = 'Europe/Stockholm'
const PROJECT = 'sthlm'
const ORG = 'org-charts'

type EventRow = Pick<
  StoredEvent,
  'id' | 'name' | 'device_id' | 'profile_id' | 'project_id' | 'session_id' | 'created_at' | 'os'
  | 'country' | 'duration' | 'revenue' | 'longitude' | 'properties'
>

const local = (iso: string) => DateTime.fromISO(iso, { zone: TZ })
const chInstant = (t: DateTime) => t.toUTC().toFormat('yyyy-LL-dd HH:mm:ss.SSS')
const instantOf = (row: EventRow) => DateTime.fromFormat(row.created_at, 'yyyy-LL-dd HH:mm:ss.SSS', { zone: 'UTC' })

const rows: EventRow[] = []
let nextId = 0
function addEvent(at: DateTime, fields: Partial<EventRow>) {
  nextId++
  const row: EventRow = {
    id: `00000000-0000-4000-8000-${String(nextId).padStart(12, '0')}`,
    name: 'screen_view',
    device_id: 'd0',
    profile_id: 'u0',
    project_id: PROJECT,
    session_id: 's0',
    created_at: chInstant(at),
    os: 'iOS',
    country: 'SE',
    duration: 0,
    revenue: 0,
    longitude: null,
    properties: {},
    ...fields,
  }
  rows.push(row)
}

function generate() {
  const rnd = seededRandom(42)
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!
  const names = ['screen_view', 'screen_view', 'click', 'purchase'] as const
  const oses = ['iOS', 'Android', 'Windows', 'Linux', 'macOS'] as const
  const plans = ['free', 'pro', 'team', ''] as const
  const amounts = ['10', '2.5', '-4', '100', 'abc', '', '1e3', undefined] as const
  // Local days with events: the previous period (Mar 16–24) and the window (Mar 25 – Apr 1) except
  // Mar 27, so that a day in the middle and the last day (Apr 2) must be filled with zeros.
  const days: DateTime[] = []
  for (let d = local('2026-03-16'); d < local('2026-04-02'); d = d.plus({ days: 1 })) {
    if (d.toISODate() !== '2026-03-27') days.push(d)
  }
  for (let i = 0; i < 900; i++) {
    const day = pick(days)
    const at = day.plus({ milliseconds: Math.floor(rnd() * (day.plus({ days: 1 }).toMillis() - day.toMillis())) })
    const profileNo = Math.floor(rnd() * 16)
    const profile = profileNo === 15 ? '' : `u${profileNo}`
    const session = rnd() < 0.05 ? '' : `s${Math.floor(rnd() * 70)}`
    const amount = pick(amounts)
    const properties: Record<string, string> = { plan: pick(plans) }
    if (amount !== undefined) properties.amount = amount
    addEvent(at, {
      name: pick(names),
      profile_id: profile,
      device_id: profile || 'anon',
      session_id: session,
      os: pick(oses),
      duration: Math.floor(rnd() * 5000),
      revenue: rnd() < 0.3 ? Math.floor(rnd() * 1000) : 0,
      longitude: rnd() < 0.2 ? null : Math.round(rnd() * 36000) / 100 - 180,
      properties,
    })
  }
  // Around the DST change (2026-03-29 02:00 +01:00 → 03:00 +02:00): still the 29th locally, though
  // a UTC day would put them elsewhere.
  addEvent(DateTime.fromISO('2026-03-29T00:30:00+01:00'), { name: 'dst', profile_id: 'u1' })
  addEvent(DateTime.fromISO('2026-03-29T01:59:59.999+01:00'), { name: 'dst', profile_id: 'u1' })
  addEvent(DateTime.fromISO('2026-03-29T03:00:00+02:00'), { name: 'dst', profile_id: 'u2' })
  addEvent(DateTime.fromISO('2026-03-29T23:30:00+02:00'), { name: 'dst', profile_id: 'u3' })
  addEvent(DateTime.fromISO('2026-03-30T00:10:00+02:00'), { name: 'dst', profile_id: 'u3' })
  addEvent(DateTime.fromISO('2026-03-28T23:59:59.999+01:00'), { name: 'dst', profile_id: 'u4' })
  // Outside every window the tests ask for.
  addEvent(local('2026-03-10T12:00'), { name: 'screen_view', profile_id: 'u1' })
  addEvent(local('2026-04-05T12:00'), { name: 'screen_view', profile_id: 'u1' })
  addEvent(local('2026-04-02T00:00').minus({ milliseconds: 1 }), { name: 'edge', profile_id: 'u9' })
  addEvent(local('2026-04-03T00:00'), { name: 'edge', profile_id: 'u9' })
  // Another project's events never count.
  addEvent(local('2026-03-26T12:00'), { name: 'screen_view', project_id: 'other' })
}

// ---------------------------------------------------------------------------------------------
// The reference: what each segment means, written from the definitions, not from the SQL.

type Segment =
  | 'event'
  | 'user'
  | 'session'
  | 'user_average'
  | 'one_event_per_user'
  | 'property_sum'
  | 'property_average'
  | 'property_min'
  | 'property_max'

interface SeriesSpec {
  name: string
  segment?: Segment
  property?: string
  filters?: { name: string; operator: string; value: string[] }[]
}

/** Local bucket starts from start (inclusive) to end (exclusive). */
function bucketList(start: DateTime, end: DateTime, unit: 'hour' | 'day' | 'week' | 'month') {
  const out: DateTime[] = []
  for (let t = start.startOf(unit); t < end; t = t.plus({ [unit]: 1 })) out.push(t)
  return out
}

function numericValue(row: EventRow, property: string): number | undefined {
  if (property.startsWith('properties.')) {
    const raw = row.properties[property.slice('properties.'.length)]
    if (raw === undefined || raw.trim() === '') return undefined
    const n = Number(raw)
    return Number.isFinite(n) ? n : undefined
  }
  if (property === 'longitude') return row.longitude === null ? undefined : Math.fround(row.longitude)
  const v = (row as unknown as Record<string, number>)[property]
  return v
}

const labelOf = (row: EventRow, breakdown: string) =>
  breakdown.startsWith('properties.') ? (row.properties[breakdown.slice('properties.'.length)] ?? '') : String((row as unknown as Record<string, unknown>)[breakdown])

interface ExpectedGroup {
  labels: string[]
  values: number[]
  profiles: number
}

/** Per breakdown group: the value of every bucket of [start, end) and the distinct profiles. */
function expected(spec: SeriesSpec, start: DateTime, end: DateTime, unit: 'hour' | 'day', breakdowns: string[] = []): ExpectedGroup[] {
  const segment = spec.segment ?? 'event'
  let selected = rows.filter((r) => {
    const t = instantOf(r)
    if (r.project_id !== PROJECT || t < start || t >= end) return false
    if (spec.name !== '*' && r.name !== spec.name) return false
    for (const f of spec.filters ?? []) {
      if (f.operator !== 'is') throw new Error('the reference knows only "is"')
      if (!f.value.includes(labelOf(r, f.name))) return false
    }
    if (segment.startsWith('property_') && numericValue(r, spec.property!) === undefined) return false
    if (['user', 'user_average', 'one_event_per_user'].includes(segment) && r.profile_id === '') return false
    if (segment === 'session' && r.session_id === '') return false
    return true
  })
  if (segment === 'one_event_per_user') {
    const latest = new Map<string, EventRow>()
    for (const r of selected) {
      const seen = latest.get(r.profile_id)
      if (!seen || instantOf(r) > instantOf(seen)) latest.set(r.profile_id, r)
    }
    selected = [...latest.values()]
  }
  const starts = bucketList(start.setZone(TZ), end.setZone(TZ), unit)
  const groups = new Map<string, EventRow[]>()
  for (const r of selected) {
    const key = JSON.stringify(breakdowns.map((b) => labelOf(r, b)))
    groups.set(key, [...(groups.get(key) ?? []), r])
  }
  if (breakdowns.length === 0 && groups.size === 0) groups.set('[]', [])
  return [...groups.entries()].map(([key, members]) => {
    const values = starts.map((s) => {
      const inBucket = members.filter((r) => +instantOf(r).setZone(TZ).startOf(unit) === +s)
      const nums = inBucket.map((r) => numericValue(r, spec.property ?? 'duration')!)
      const distinct = (f: (r: EventRow) => string) => new Set(inBucket.map(f)).size
      if (inBucket.length === 0) return 0
      switch (segment) {
        case 'event':
        case 'one_event_per_user':
          return inBucket.length
        case 'user':
          return distinct((r) => r.profile_id)
        case 'session':
          return distinct((r) => r.session_id)
        case 'user_average':
          return inBucket.length / distinct((r) => r.profile_id)
        case 'property_sum':
          return nums.reduce((a, b) => a + b, 0)
        case 'property_average':
          return nums.reduce((a, b) => a + b, 0) / nums.length
        case 'property_min':
          return Math.min(...nums)
        case 'property_max':
          return Math.max(...nums)
      }
    })
    const profiles = new Set(members.map((r) => r.profile_id).filter((p) => p !== '')).size
    return { labels: JSON.parse(key) as string[], values, profiles }
  })
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
/** Names compare element by element (code units), as the ties of the response are ordered. */
function cmpNames(a: string[], b: string[]) {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1
  return a.length - b.length
}
const round2 = (x: number) => Math.round(x * 100) / 100

// ---------------------------------------------------------------------------------------------

let rt: TestRuntime
let app: ReturnType<typeof testApp>
let credentials: Record<string, string>

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000', LOG_LEVEL: 'error' })
  await createProject(rt.runner, { id: PROJECT, name: 'Stockholm', timezone: TZ, organizationId: ORG })
  const root = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: ORG, name: 'charts-root' })
  credentials = { 'openpanel-client-id': root.id, 'openpanel-client-secret': root.secret }
  generate()
  await rt.engine.client.insert({ table: 'events', values: rows, format: 'JSONEachRow' })
  app = testApp(rt, { now: () => new Date('2026-04-10T10:00:00Z') })
})

afterAll(async () => {
  await rt?.dispose()
})

async function chart(params: Record<string, unknown>, project = PROJECT) {
  const search = new URLSearchParams({ projectId: project })
  for (const [k, v] of Object.entries(params)) search.set(k, typeof v === 'string' ? v : JSON.stringify(v))
  const res = await app.request(`/export/charts?${search}`, { headers: credentials })
  return { status: res.status, headers: res.headers, body: (await res.json()) as any }
}

const WINDOW = { startDate: '2026-03-25', endDate: '2026-04-02' }
const START = local('2026-03-25')
const END = local('2026-04-03')
const PREV_START = local('2026-03-16')

describe('GET /export/charts', () => {
  it('day buckets across the DST change carry the offset in force, every day present, zeros filled', async () => {
    const { status, body, headers } = await chart({ ...WINDOW, series: [{ name: 'screen_view' }] })
    expect(status).toBe(200)
    expect(headers.get('x-quarry-timezone')).toBe(TZ)
    expect(headers.get('x-quarry-range')).toBe('2026-03-25T00:00:00+01:00/2026-04-03T00:00:00+02:00')
    const dates = body.series[0].data.map((d: { date: string }) => d.date)
    expect(dates).toEqual([
      '2026-03-25T00:00:00+01:00',
      '2026-03-26T00:00:00+01:00',
      '2026-03-27T00:00:00+01:00',
      '2026-03-28T00:00:00+01:00',
      '2026-03-29T00:00:00+01:00',
      '2026-03-30T00:00:00+02:00',
      '2026-03-31T00:00:00+02:00',
      '2026-04-01T00:00:00+02:00',
      '2026-04-02T00:00:00+02:00',
    ])
    const [exp] = expected({ name: 'screen_view' }, START, END, 'day')
    expect(body.series[0].data.map((d: { count: number }) => d.count)).toEqual(exp!.values)
    expect(exp!.values[2]).toBe(0) // Mar 27
    expect(exp!.values[8]).toBe(0) // Apr 2, the last bucket
    expect(exp!.values.filter((v) => v > 0).length).toBe(7)
  })

  it('events on either side of a local midnight around the DST change land in their local day', async () => {
    const { body } = await chart({ startDate: '2026-03-28', endDate: '2026-03-30', series: [{ name: 'dst' }] })
    expect(body.series[0].data).toEqual([
      { date: '2026-03-28T00:00:00+01:00', count: 1 },
      { date: '2026-03-29T00:00:00+01:00', count: 4 },
      { date: '2026-03-30T00:00:00+02:00', count: 1 },
    ])
  })

  it('hour buckets on the DST day: 23 hours, 02:00 missing, offsets switch', async () => {
    const { body } = await chart({ startDate: '2026-03-29', endDate: '2026-03-29', interval: 'hour', series: [{ name: 'dst' }] })
    const data = body.series[0].data as { date: string; count: number }[]
    expect(data).toHaveLength(23)
    expect(data.slice(0, 4).map((d) => d.date)).toEqual([
      '2026-03-29T00:00:00+01:00',
      '2026-03-29T01:00:00+01:00',
      '2026-03-29T03:00:00+02:00',
      '2026-03-29T04:00:00+02:00',
    ])
    expect(data[22]!.date).toBe('2026-03-29T23:00:00+02:00')
    const [exp] = expected({ name: 'dst' }, local('2026-03-29'), local('2026-03-30'), 'hour')
    expect(data.map((d) => d.count)).toEqual(exp!.values)
    expect(data[0]!.count).toBe(1)
    expect(data[1]!.count).toBe(1)
    expect(data[2]!.count).toBe(1)
    expect(data[22]!.count).toBe(1)
  })

  const segments: SeriesSpec[] = [
    { name: 'screen_view', segment: 'event' },
    { name: 'screen_view', segment: 'user' },
    { name: 'click', segment: 'session' },
    { name: '*', segment: 'user_average' },
    { name: 'screen_view', segment: 'one_event_per_user' },
    { name: 'purchase', segment: 'property_sum', property: 'properties.amount' },
    { name: 'purchase', segment: 'property_average', property: 'properties.amount' },
    { name: '*', segment: 'property_min', property: 'properties.amount' },
    { name: '*', segment: 'property_max', property: 'longitude' },
    { name: 'click', segment: 'property_sum', property: 'duration' },
  ]
  for (const spec of segments) {
    it(`segment ${spec.segment} of ${spec.name}${spec.property ? ` (${spec.property})` : ''}`, async () => {
      const { status, body } = await chart({ ...WINDOW, series: [spec] })
      expect(status).toBe(200)
      const [exp] = expected(spec, START, END, 'day')
      expect(body.series).toHaveLength(1)
      const s = body.series[0]
      expect(s.names).toEqual([spec.name])
      expect(s.event).toEqual({ id: 'A', name: spec.name })
      const counts = s.data.map((d: { count: number }) => d.count) as number[]
      expect(counts).toHaveLength(9)
      counts.forEach((v, i) => expect(v).toBeCloseTo(exp!.values[i]!, 6))
      expect(exp!.values.some((v) => v !== 0)).toBe(true)
      expect(s.metrics.sum).toBeCloseTo(sum(exp!.values), 6)
      expect(s.metrics.average).toBeCloseTo(round2(sum(exp!.values) / 9), 6)
      expect(s.metrics.min).toBeCloseTo(Math.min(...exp!.values), 6)
      expect(s.metrics.max).toBeCloseTo(Math.max(...exp!.values), 6)
      expect(s.metrics.count).toBe(exp!.profiles)
      expect(body.metrics.sum).toBeCloseTo(s.metrics.sum, 6)
    })
  }

  it('one_event_per_user counts every profile once, in the bucket of its latest event', async () => {
    const { body } = await chart({ ...WINDOW, series: [{ name: '*', segment: 'one_event_per_user' }] })
    const profiles = new Set(
      rows.filter((r) => r.project_id === PROJECT && r.profile_id !== '' && instantOf(r) >= START && instantOf(r) < END).map((r) => r.profile_id),
    )
    expect(body.series[0].metrics.sum).toBe(profiles.size)
    expect(body.series[0].metrics.count).toBe(profiles.size)
  })

  it('series filters narrow one series only; several series are lettered and sorted by sum', async () => {
    const specs: SeriesSpec[] = [
      { name: 'click', segment: 'event' },
      { name: 'screen_view', segment: 'event', filters: [{ name: 'os', operator: 'is', value: ['iOS', 'Android'] }] },
      { name: 'purchase', segment: 'user' },
    ]
    const { body } = await chart({ ...WINDOW, series: specs })
    const want = specs
      .map((spec, i) => {
        const [exp] = expected(spec, START, END, 'day')
        const letter = 'ABC'[i]!
        return { names: [`(${letter}) ${spec.name}`], event: { id: letter, name: spec.name }, counts: exp!.values, sum: sum(exp!.values) }
      })
      .sort((a, b) => b.sum - a.sum || cmpNames(a.names, b.names))
    expect(
      body.series.map((s: any) => ({ names: s.names, event: s.event, counts: s.data.map((d: any) => d.count), sum: s.metrics.sum })),
    ).toEqual(want)
    const all = want.flatMap((w) => w.counts)
    expect(body.metrics).toEqual({ sum: sum(all), average: round2(sum(all) / all.length), min: Math.min(...all), max: Math.max(...all) })
  })

  it('the legacy name events works when series is absent', async () => {
    const { status, body } = await chart({ ...WINDOW, events: [{ name: 'click', id: 'x1', displayName: 'Clicks' }] })
    expect(status).toBe(200)
    const [exp] = expected({ name: 'click' }, START, END, 'day')
    expect(body.series[0].data.map((d: any) => d.count)).toEqual(exp!.values)
  })

  it('no series: an empty chart', async () => {
    const { status, body } = await chart({ ...WINDOW })
    expect(status).toBe(200)
    expect(body).toEqual({ series: [], metrics: { sum: 0, average: 0, min: 0, max: 0 } })
  })

  it('a series without events is all zeros, the last bucket too, and has no count', async () => {
    const { body } = await chart({ ...WINDOW, series: [{ name: 'never-tracked' }] })
    expect(body.series).toHaveLength(1)
    expect(body.series[0].data).toHaveLength(9)
    expect(body.series[0].data.every((d: any) => d.count === 0)).toBe(true)
    expect(body.series[0].metrics).toEqual({ sum: 0, average: 0, min: 0, max: 0 })
  })

  it('the end date includes its whole local day and nothing after', async () => {
    const { body } = await chart({ startDate: '2026-04-01', endDate: '2026-04-02', series: [{ name: 'edge' }] })
    expect(body.series[0].data).toEqual([
      { date: '2026-04-01T00:00:00+02:00', count: 1 },
      { date: '2026-04-02T00:00:00+02:00', count: 0 },
    ])
  })

  describe('breakdowns', () => {
    const shape = (body: any) =>
      body.series.map((s: any) => ({ names: s.names, breakdowns: s.event.breakdowns, counts: s.data.map((d: any) => d.count), count: s.metrics.count }))

    const want = (groups: ExpectedGroup[], name: string, breakdowns: string[]) =>
      groups
        .map((g) => ({
          names: [name, ...g.labels],
          breakdowns: Object.fromEntries(breakdowns.map((b, i) => [b, g.labels[i]])),
          counts: g.values,
          count: g.profiles,
          sum: sum(g.values),
        }))
        .sort((a, b) => b.sum - a.sum || cmpNames(a.names, b.names))
        .map(({ sum: _, ...rest }) => rest)

    it('by a column', async () => {
      const { body } = await chart({ ...WINDOW, series: [{ name: 'screen_view', segment: 'user' }], breakdowns: [{ name: 'os' }] })
      const groups = expected({ name: 'screen_view', segment: 'user' }, START, END, 'day', ['os'])
      expect(groups.length).toBe(5)
      expect(shape(body)).toEqual(want(groups, 'screen_view', ['os']))
      // Each breakdown series is zero filled too.
      for (const s of body.series) expect(s.data).toHaveLength(9)
    })

    it('by a property, missing values as ""', async () => {
      const { body } = await chart({ ...WINDOW, series: [{ name: 'click' }], breakdowns: [{ name: 'properties.plan' }] })
      const groups = expected({ name: 'click' }, START, END, 'day', ['properties.plan'])
      expect(groups.map((g) => g.labels[0]).sort()).toEqual(['', 'free', 'pro', 'team'])
      expect(shape(body)).toEqual(want(groups, 'click', ['properties.plan']))
    })

    it('by a column and a property together, with a property segment', async () => {
      const spec: SeriesSpec = { name: '*', segment: 'property_sum', property: 'revenue' }
      const { body } = await chart({ ...WINDOW, series: [spec], breakdowns: [{ name: 'os' }, { name: 'properties.plan' }] })
      const groups = expected(spec, START, END, 'day', ['os', 'properties.plan'])
      expect(groups.length).toBe(20)
      expect(shape(body)).toEqual(want(groups, '*', ['os', 'properties.plan']))
    })

    it('limit keeps the top groups by sum (ties by label)', async () => {
      const spec: SeriesSpec = { name: '*' }
      const { body } = await chart({ ...WINDOW, series: [spec], breakdowns: [{ name: 'profile_id' }], limit: '4' })
      const groups = expected(spec, START, END, 'day', ['profile_id'])
      expect(groups.length).toBeGreaterThan(4)
      const top = groups.sort((a, b) => sum(b.values) - sum(a.values) || (a.labels[0]! < b.labels[0]! ? -1 : 1)).slice(0, 4)
      expect(shape(body)).toEqual(want(top, '*', ['profile_id']))
    })

    it('limit out of range is clamped, as OpenPanel (which ignores it) would answer, and X-Quarry-Clamped says so', async () => {
      const spec: SeriesSpec = { name: '*' }
      const groups = expected(spec, START, END, 'day', ['profile_id'])
      const top = [...groups].sort((a, b) => sum(b.values) - sum(a.values) || (a.labels[0]! < b.labels[0]! ? -1 : 1))
      const low = await chart({ ...WINDOW, series: [spec], breakdowns: [{ name: 'profile_id' }], limit: '0' })
      expect([low.status, low.headers.get('x-quarry-clamped')]).toEqual([200, 'limit=1'])
      expect(shape(low.body)).toEqual(want(top.slice(0, 1), '*', ['profile_id']))
      const high = await chart({ ...WINDOW, series: [spec], breakdowns: [{ name: 'profile_id' }], limit: '5000' })
      expect([high.status, high.headers.get('x-quarry-clamped')]).toEqual([200, 'limit=1000'])
      // Every group (fewer than 1000); the one of empty profile ids has no profiles, so no count.
      expect(shape(high.body)).toEqual(want(top.slice(0, 1000), '*', ['profile_id']).map((g) => ({ ...g, count: g.count || undefined })))
    })

    it('limit applies per series, and several series keep their letters', async () => {
      const { body } = await chart({
        ...WINDOW,
        series: [{ name: 'click' }, { name: 'purchase' }],
        breakdowns: [{ name: 'os' }],
        limit: '2',
      })
      expect(body.series).toHaveLength(4)
      expect(body.series.filter((s: any) => s.event.id === 'A')).toHaveLength(2)
      expect(body.series.filter((s: any) => s.event.id === 'B')).toHaveLength(2)
      expect(new Set(body.series.map((s: any) => s.id)).size).toBe(4)
      for (const s of body.series) expect(s.names[0]).toMatch(/^\([AB]\) /)
    })
  })

  describe('previous=true', () => {
    const compare = (cur: number, prev: number) => ({
      value: prev,
      state: cur > prev ? 'positive' : cur < prev ? 'negative' : 'neutral',
      raw: prev === 0 ? null : ((cur - prev) / prev) * 100,
    })
    const check = (got: { value: number; diff: number | null; state: string }, cur: number, prev: number) => {
      const w = compare(cur, prev)
      expect(got.value).toBeCloseTo(w.value, 6)
      expect(got.state).toBe(w.state)
      if (w.raw === null) expect(got.diff).toBeNull()
      else {
        expect(Math.abs(got.diff! - w.raw)).toBeLessThanOrEqual(0.05 + 1e-9)
        expect(Math.round(got.diff! * 10)).toBeCloseTo(got.diff! * 10, 9)
        expect(Math.sign(got.diff!)).toBe(Math.sign(w.raw))
      }
    }

    it('compares every bucket with its counterpart in the equally long period before', async () => {
      const spec: SeriesSpec = { name: 'screen_view', segment: 'user' }
      const { body, headers } = await chart({ ...WINDOW, series: [spec], previous: 'true' })
      expect(headers.get('x-quarry-previous-range')).toBe('2026-03-16T00:00:00+01:00/2026-03-25T00:00:00+01:00')
      const [cur] = expected(spec, START, END, 'day')
      const [prev] = expected(spec, PREV_START, START, 'day')
      const s = body.series[0]
      s.data.forEach((d: any, i: number) => check(d.previous, cur!.values[i]!, prev!.values[i]!))
      // Both directions occur (Mar 27 and Apr 2 have no events, their counterparts do).
      const states = new Set(s.data.map((d: any) => d.previous.state))
      expect(states.has('negative')).toBe(true)
      expect(states.has('positive')).toBe(true)
      check(s.metrics.previous.sum, sum(cur!.values), sum(prev!.values))
      check(s.metrics.previous.average, round2(sum(cur!.values) / 9), round2(sum(prev!.values) / 9))
      check(s.metrics.previous.min, Math.min(...cur!.values), Math.min(...prev!.values))
      check(s.metrics.previous.max, Math.max(...cur!.values), Math.max(...prev!.values))
      const [prevAll] = expected(spec, PREV_START, START, 'day')
      check(s.metrics.previous.count, cur!.profiles, prevAll!.profiles)
    })

    it('a decrease has a negative diff, an increase a positive one, a previous zero none', async () => {
      // dst: 6 events Mar 28–30; edge: 1 event Apr 1. One-day windows make the arithmetic visible.
      const one = await chart({ startDate: '2026-03-29', endDate: '2026-03-29', series: [{ name: 'dst' }], previous: 'true' })
      expect(one.body.series[0].data[0].count).toBe(4)
      expect(one.body.series[0].data[0].previous).toEqual({ value: 1, diff: 300, state: 'positive' })
      const two = await chart({ startDate: '2026-03-30', endDate: '2026-03-30', series: [{ name: 'dst' }], previous: 'true' })
      expect(two.body.series[0].data[0].count).toBe(1)
      expect(two.body.series[0].data[0].previous).toEqual({ value: 4, diff: -75, state: 'negative' })
      expect(two.body.series[0].metrics.previous.sum).toEqual({ value: 4, diff: -75, state: 'negative' })
      const three = await chart({ startDate: '2026-04-01', endDate: '2026-04-01', series: [{ name: 'edge' }], previous: 'true' })
      expect(three.body.series[0].data[0].previous).toEqual({ value: 0, diff: null, state: 'positive' })
    })
  })

  describe('400', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['an unknown segment', { series: [{ name: 'x', segment: 'groups' }] }, 'series.0.segment'],
      ['11 series', { series: Array.from({ length: 11 }, () => ({ name: 'x' })) }, 'series'],
      ['4 breakdowns', { series: [{ name: 'x' }], breakdowns: [{ name: 'os' }, { name: 'country' }, { name: 'city' }, { name: 'path' }] }, 'breakdowns'],
      ['a repeated breakdown', { series: [{ name: 'x' }], breakdowns: [{ name: 'os' }, { name: 'os' }] }, 'breakdowns'],
      ['an unknown breakdown', { series: [{ name: 'x' }], breakdowns: [{ name: 'nope' }] }, 'breakdowns.0.name'],
      ['an unknown interval', { series: [{ name: 'x' }], interval: 'year' }, 'interval'],
      ['more than 10,000 buckets', { series: [{ name: 'x' }], interval: 'minute' }, 'interval'],
      ['an unknown property', { series: [{ name: 'x', segment: 'property_max', property: 'os' }] }, 'series.0.property'],
      ['an unknown parameter', { series: [{ name: 'x' }], chartTyp: 'linear' }, 'chartTyp'],
      ['an unknown series key', { series: [{ name: 'x', colour: 'red' }] }, 'series.0.colour'],
      ['limit not a number', { series: [{ name: 'x' }], limit: 'many' }, 'limit'],
      ['series not JSON', { series: '[{name:' }, 'series'],
      ['previous not a boolean', { series: [{ name: 'x' }], previous: 'yes' }, 'previous'],
    ]
    for (const [what, params, path] of cases) {
      it(what, async () => {
        const { status, body } = await chart(params)
        expect(status).toBe(400)
        expect(body.code).toBe('invalid_parameters')
        expect(body.details.map((d: { path: string }) => d.path)).toContain(path)
      })
    }

    it('a chart of more points than the bound is refused before it is built; a lower limit or a longer interval makes it fit', async () => {
      // A UTC project whose 1001 events each carry their own sku, spread over 21 days.
      const wide = 'wide-skus'
      await createProject(rt.runner, { id: wide, name: 'Wide', timezone: 'UTC', organizationId: ORG })
      const from = DateTime.fromISO('2026-03-01T00:00:00Z', { zone: 'UTC' })
      const skus = Array.from({ length: 1001 }, (_, i) => `sku-${i}`)
      await rt.engine.client.insert({
        table: 'events',
        values: skus.map((sku, i) => ({
          id: `00000000-0000-4000-9000-${String(i).padStart(12, '0')}`,
          name: 'view',
          project_id: wide,
          device_id: `d${i}`,
          profile_id: `d${i}`,
          session_id: `s${i}`,
          created_at: chInstant(from.plus({ minutes: i * 30 })),
          properties: { sku },
        })),
        format: 'JSONEachRow',
      })
      const hours = 21 * 24
      const window = { startDate: '2026-03-01', endDate: '2026-03-21', interval: 'hour', series: [{ name: 'view' }], breakdowns: [{ name: 'properties.sku' }] }
      const groupsAt = (limit: number) => Math.min(new Set(skus).size, limit)
      const over = await chart({ ...window, limit: '1000' }, wide)
      expect(groupsAt(1000) * hours).toBeGreaterThan(500_000)
      expect(over.status).toBe(400)
      expect(over.body.details[0].path).toBe('limit')
      expect(over.body.details[0].message).toContain(`${groupsAt(1000) * hours} points`)
      // Just under the bound: every group and every hour, built (before the bound, a chart this size
      // overflowed the call stack in summarize and answered 500).
      const fits = await chart({ ...window, limit: '990' }, wide)
      expect(groupsAt(990) * hours).toBeLessThanOrEqual(500_000)
      expect(fits.status, JSON.stringify(fits.body).slice(0, 500)).toBe(200)
      expect(fits.body.series).toHaveLength(groupsAt(990))
      expect(fits.body.series.every((x: { data: unknown[] }) => x.data.length === hours)).toBe(true)
      const daily = await chart({ ...window, limit: '1000', interval: 'day' }, wide)
      expect(daily.status).toBe(200)
      expect(daily.body.series).toHaveLength(groupsAt(1000))
    })

    it('10,000 minute buckets are fine', async () => {
      const start = local('2026-03-20T00:00')
      const { status, body } = await chart({
        startDate: start.toISO(),
        endDate: start.plus({ minutes: 10_000 }).minus({ milliseconds: 1 }).toISO(),
        interval: 'minute',
        series: [{ name: 'click' }],
      })
      expect(status).toBe(200)
      expect(body.series[0].data).toHaveLength(10_000)
    })
  })

  it('project_id works like projectId', async () => {
    const search = new URLSearchParams({ project_id: PROJECT, ...WINDOW, series: JSON.stringify([{ name: 'click' }]) })
    const res = await app.request(`/export/charts?${search}`, { headers: credentials })
    expect(res.status).toBe(200)
    const [exp] = expected({ name: 'click' }, START, END, 'day')
    expect(((await res.json()) as any).series[0].metrics.sum).toBe(sum(exp!.values))
  })

  it('values reach ClickHouse as parameters only (explain=sql)', async () => {
    const hostile = "x'); DROP TABLE events; --"
    const { status, body } = await chart({
      ...WINDOW,
      explain: 'sql',
      series: [{ name: hostile, segment: 'property_sum', property: `properties.${hostile}`, filters: [{ name: 'os', operator: 'is', value: [hostile] }] }],
      breakdowns: [{ name: `properties.${hostile}` }],
    })
    expect(status).toBe(200)
    expect(body.sql).toHaveLength(1)
    expect(body.sql[0]).not.toContain('DROP TABLE')
    // Fragments land in the statement only, never inside a comment line.
    for (const line of (body.sql[0] as string).split('\n')) if (line.trim().startsWith('--')) expect(line).not.toMatch(/\{v\d+:/)
    expect(Object.values(body.params)).toContain(hostile)
  })

  it('is described in the OpenAPI document', async () => {
    const res = await app.request('/openapi.json')
    expect(res.status).toBe(200)
    const doc = (await res.json()) as any
    const op = doc.paths['/export/charts'].get
    const names = op.parameters.map((p: { name: string }) => p.name)
    for (const n of ['projectId', 'project_id', 'series', 'events', 'breakdowns', 'limit', 'interval', 'range', 'startDate', 'endDate', 'timezone', 'previous']) {
      expect(names).toContain(n)
    }
  })

  it('without credentials: 401', async () => {
    const res = await app.request(`/export/charts?projectId=${PROJECT}`)
    expect(res.status).toBe(401)
  })
})
