/**
 * /export/charts answered from the sealed history's event rollups (src/query/sealed-charts.ts):
 * over random windows (whole local days and instants, on the hour or not), zones (half-hour offsets
 * included), intervals, event names and segments, the body equals the one
 * the same app gives without a sealed history, and each bucket equals what this file counts from
 * the inserted rows. The answers stay right when the data changes under a build.
 *
 * The extra rows reach the seams: a session that identifies itself after its first event (its
 * second profile is no session's visitor), events outside any session and without a profile, a
 * profile first seen after C and one seen on both sides of C.
 */
import { DateTime } from 'luxon'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../src/auth/clients.ts'
import { eventMaker, PROJECTS } from './fixtures/insights-data.ts'
import { SealedHistory } from '../src/services/sealed/index.ts'
import { openInsights, requestAs, type Harness, type Reply } from './fixtures/insights-harness.ts'
import { bucketStarts, ms, type EventRow, type Interval } from './fixtures/insights-model.ts'
import { testApp } from './helpers/runtime.ts'
import { seededRandom } from './helpers/random.ts'

const U = PROJECTS.utc.id
/** C at the harness's pinned clock (22:37 UTC on 14 April). */
const C = Date.parse('2026-04-14T21:00:00Z')

let h: Harness
let plain: (url: string) => Promise<Reply>
let events: EventRow[]
const extra = eventMaker(800_000)

const SEAMS: EventRow[] = [
  extra('cx-id', 'cx-anon', '2026-04-10T08:00:00Z'),
  extra('cx-id', 'cx-known', '2026-04-10T08:05:00Z', { name: 'click' }),
  // The same profile later that day: in a window from 08:03 its first hour is read from the events, this one from the rollups.
  extra('cx-id', 'cx-known', '2026-04-10T10:00:00Z', { name: 'click' }),
  extra('', 'cx-server', '2026-04-11T09:00:00Z', { name: 'click' }),
  extra('', '', '2026-04-11T09:30:00Z', { name: 'click' }),
  extra('cx-empty', '', '2026-04-13T12:00:00Z'),
  extra('cx-both-1', 'cx-both', '2026-04-14T19:10:00Z'),
  extra('cx-both-2', 'cx-both', '2026-04-14T21:20:00Z'),
  extra('cx-new', 'cx-new', '2026-04-14T21:40:00Z'),
  // An hour that a window ends inside: one profile before the end, one after it.
  extra('cx-edge', 'cx-edge-1', '2026-04-13T15:20:00Z'),
  extra('cx-edge', 'cx-edge-2', '2026-04-13T15:50:00Z'),
  extra('', 'cx-new-server', '2026-04-14T22:05:00Z', { name: 'click' }),
  extra('', '', '2026-04-14T22:15:00Z', { name: 'click' }),
]

async function insert(rows: EventRow[]): Promise<void> {
  await h.rt.engine.client.insert({ table: 'events', values: rows, format: 'JSONEachRow' })
  events.push(...rows)
}

beforeAll(async () => {
  h = await openInsights({ sealed: true })
  events = [...h.data.events]
  await insert(SEAMS)
  await h.sealed!.build(U)
  const app = testApp(h.rt, { now: () => h.clock.now })
  const root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'root-plain' })
  plain = (url) => requestAs(app, url, root)
})
afterAll(async () => {
  await h?.dispose()
})

type Segment = 'event' | 'user' | 'user_average' | 'session'
interface Case {
  label: string
  url: string
  name: string
  segment: Segment
  interval: Interval
  timezone: string
}

/**
 * Whether the sealed rollups can answer a request: a segment they hold, and no hourly buckets that
 * start inside UTC hours off their half (Kathmandu's, at a quarter past); a half-hour zone's hours
 * come from the half-hour rows, and other buckets and windows that split hours read those hours
 * from the events.
 */
const sealable = (c: Case): boolean => c.segment !== 'session' && !(c.interval === 'hour' && c.timezone === 'Asia/Kathmandu')

/** A series' value per bucket of [start, end), counted from the rows. */
function model(name: string, segment: Segment, start: number, end: number, timezone: string, interval: Interval) {
  const starts = bucketStarts({ start, end, timezone }, interval).map((t) => t.toMillis())
  const rows = events.filter((e) => e.project_id === U && ms(e) >= start && ms(e) < end && (name === '*' || e.name === name))
  const kept = rows.filter((e) => (segment === 'event' ? true : segment === 'session' ? e.session_id !== '' : e.profile_id !== ''))
  const values = starts.map((b, i) => {
    const inBucket = kept.filter((e) => ms(e) >= b && (i + 1 === starts.length || ms(e) < starts[i + 1]!))
    const profiles = new Set(inBucket.map((e) => e.profile_id)).size
    if (segment === 'event') return inBucket.length
    if (segment === 'session') return new Set(inBucket.map((e) => e.session_id)).size
    if (segment === 'user') return profiles
    return profiles === 0 ? 0 : inBucket.length / profiles
  })
  const profiles = new Set(kept.filter((e) => e.profile_id !== '').map((e) => e.profile_id)).size
  return { values, profiles, any: kept.length > 0 }
}

const ZONES = ['UTC', 'Europe/Stockholm', 'America/New_York', 'Asia/Kolkata', 'Asia/Kathmandu'] as const

function cases(seed: number, n: number): Case[] {
  const rnd = seededRandom(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!
  const first = Date.parse('2026-03-01T00:00:00Z')
  const last = Date.parse('2026-04-15T00:00:00Z')
  const out: Case[] = []
  for (let i = 0; i < n; i++) {
    const timezone = pick(ZONES)
    const name = pick(['screen_view', '*', 'click'])
    const segment = pick(['event', 'user', 'user_average', 'session'] as const)
    const a = first + Math.floor(rnd() * (C - first))
    const b = Math.min(last, a + 3_600_000 + Math.floor(rnd() * 20 * 86_400_000))
    let startDate: string
    let endDate: string
    let interval: Interval
    let start: number
    if (rnd() < 0.6) {
      const s = DateTime.fromMillis(a, { zone: timezone }).startOf('day')
      startDate = s.toISODate()!
      endDate = DateTime.fromMillis(b, { zone: timezone }).toISODate()!
      interval = pick(['day', 'week', 'hour'] as const)
      start = s.toMillis()
    } else {
      const aligned = rnd() < 0.7
      start = aligned ? Math.floor(a / 3_600_000) * 3_600_000 : a
      startDate = new Date(start).toISOString()
      endDate = new Date(b).toISOString()
      interval = pick(['hour', 'day'] as const)
    }
    const previous = rnd() < 0.4
    const series = JSON.stringify([{ name, segment }])
    const qs = new URLSearchParams({ projectId: U, series, interval, startDate, endDate, timezone, ...(previous ? { previous: 'true' } : {}) })
    out.push({ label: `#${i} ${name} ${segment} ${interval} ${timezone} ${startDate} → ${endDate}${previous ? ' +previous' : ''}`, url: `http://quarry.test/export/charts?${qs}`, name, segment, interval, timezone })
  }
  return out
}

const window = (headers: Headers, header: string) => {
  const [s, e] = headers.get(header)!.split('/')
  return { start: Date.parse(s!), end: Date.parse(e!) }
}

function expectModel(c: Case, reply: Reply) {
  const body = reply.body as any
  const w = window(reply.headers, 'x-quarry-range')
  const m = model(c.name, c.segment, w.start, w.end, c.timezone, c.interval)
  if (!m.any) {
    expect(body.series, c.label).toEqual([])
    return
  }
  const s = body.series[0]
  expect(s.data.length, c.label).toBe(m.values.length)
  s.data.forEach((d: any, i: number) => expect(d.count, `${c.label} bucket ${d.date}`).toBeCloseTo(m.values[i]!, 6))
  expect(s.metrics.count, c.label).toBe(m.profiles)
  if (reply.headers.get('x-quarry-previous-range')) {
    const p = window(reply.headers, 'x-quarry-previous-range')
    const pm = model(c.name, c.segment, p.start, p.end, c.timezone, c.interval)
    s.data.forEach((d: any, i: number) => {
      if (i < pm.values.length) expect(d.previous.value, `${c.label} previous ${i}`).toBeCloseTo(pm.values[i]!, 6)
      else expect(d.previous, `${c.label} previous ${i}`).toBeUndefined()
    })
    expect(s.metrics.previous.count?.value ?? 0, c.label).toBe(pm.profiles)
  }
}

/**
 * Windows that start on an hour and end inside one, before C and after it; days and hours of a
 * half-hour zone (the half-hour rows), days of a quarter-hour zone, between instants off the hour and
 * on the half hour, with the previous window, so that hours before C are read from the events as
 * well as from the rollups, some with the same profile (cx-known on 10 April, cx-edge on 13 April).
 */
function edges(): Case[] {
  const windows = [
    ['2026-04-13T00:00:00Z', '2026-04-13T15:30:00Z', 'hour', 'UTC', false],
    ['2026-04-12T00:00:00Z', '2026-04-14T22:30:00Z', 'hour', 'UTC', false],
    ['2026-04-09', '2026-04-14', 'day', 'Asia/Kolkata', true],
    ['2026-04-12', '2026-04-14', 'hour', 'Asia/Kolkata', true],
    ['2026-04-09', '2026-04-14', 'day', 'Asia/Kathmandu', true],
    ['2026-04-10T07:30:00Z', '2026-04-13T15:30:00Z', 'day', 'UTC', true],
    ['2026-04-10T08:03:00Z', '2026-04-14T21:40:00Z', 'day', 'UTC', true],
    ['2026-04-12T15:35:00Z', '2026-04-14T22:10:00Z', 'hour', 'UTC', true],
  ] as const
  return (['event', 'user', 'user_average'] as const).flatMap((segment) =>
    windows.map(([startDate, endDate, interval, timezone, previous]) => {
      const qs = new URLSearchParams({ projectId: U, series: JSON.stringify([{ name: '*', segment }]), interval, startDate, endDate, timezone, ...(previous ? { previous: 'true' } : {}) })
      return { label: `${segment} ${interval} ${timezone} ${startDate} → ${endDate}${previous ? ' +previous' : ''}`, url: `http://quarry.test/export/charts?${qs}`, name: '*', segment, interval, timezone }
    }),
  )
}

describe('charts from the sealed event rollups', () => {
  const all = [...edges(), ...cases(20261124, 36)]
  const paths: boolean[] = []
  for (const c of all) {
    it(c.label, async () => {
      const [sealed, reference] = [await h.fetch(c.url), await plain(c.url)]
      expect(sealed.status, JSON.stringify(sealed.body)).toBe(200)
      expect(reference.status).toBe(200)
      paths.push(sealable(c))
      expect(sealed.headers.get('x-quarry-sealed-until') !== null, 'answered from the sealed history').toBe(sealable(c))
      expect(reference.headers.get('x-quarry-sealed-until')).toBeNull()
      expect(sealed.body).toEqual(reference.body)
      expectModel(c, sealed)
    })
  }
  it('the random cases reached both paths', () => {
    expect(paths.filter(Boolean).length).toBeGreaterThan(8)
    expect(paths.filter((p) => !p).length).toBeGreaterThan(8)
  })
})

describe('what a sealed chart reads', () => {
  // A request first: one that only explains itself plans with what earlier requests checked and
  // wrote (the snapshot a request starts is written in the background).
  const explained = async (query: Record<string, string>) => {
    const url = `http://quarry.test/export/charts?${new URLSearchParams({ projectId: U, series: JSON.stringify([{ name: '*', segment: 'user' }]), timezone: 'UTC', ...query })}`
    expect((await h.fetch(url)).headers.get('x-quarry-sealed-until')).not.toBeNull()
    await h.sealed!.snapshotsWritten(U)
    const { sql, params } = (await h.fetch(`${url}&explain=sql`)).body as { sql: string[]; params: Record<string, string> }
    return { sql: sql.join('\n'), params }
  }

  it("takes whole UTC days from the day rows, C's day whole, and the events after C with their profiles' numbers from their snapshot", async () => {
    const { sql, params } = await explained({ range: '30d', interval: 'day', previous: 'true' })
    expect(params.rollup_from! <= params.long_from! && params.long_from! < params.long_to!).toBe(true)
    expect(params.long_to! > params.rollup_to!).toBe(true)
    expect(sql).toContain('FROM sealed_live_events')
    expect(sql).not.toContain('FROM sealed_visitors')
    expect(sql).not.toMatch(/FROM events\b/)
  })

  it('reads hours only where the buckets split UTC days, and looks the numbers up where it reads events before C', async () => {
    const hourly = await explained({ range: '7d', interval: 'hour' })
    expect(hourly.params.long_from).toBe(hourly.params.long_to)
    const before = await explained({ startDate: '2026-04-12T00:00:00Z', endDate: '2026-04-13T15:30:00Z', interval: 'hour' })
    expect(before.sql).toContain('FROM sealed_visitors')
    expect(before.sql).not.toContain('FROM sealed_live_events')
  })

  it('reads the hours its buckets or window split on the half hour from the half-hour rows', async () => {
    const kolkata = await explained({ range: '30d', interval: 'day', timezone: 'Asia/Kolkata', previous: 'true' })
    expect(kolkata.params.holes).toBeUndefined()
    const halves = kolkata.params.halves as unknown as string[]
    // Both halves of the hour of 30 local midnights (18:30 UTC) in each window, the current window's
    // start among them, and the half hour the previous window starts with.
    expect(halves.length).toBeGreaterThanOrEqual(119)
    expect(new Set(halves).size).toBe(halves.length)
    expect(halves.every((t) => t.endsWith(' 18:00:00') || t.endsWith(' 18:30:00'))).toBe(true)
    expect(halves.filter((t) => t.endsWith(' 18:30:00')).length).toBe(halves.filter((t) => t.endsWith(' 18:00:00')).length + 1)
    expect(kolkata.sql).toContain('FROM sealed_live_events')
    expect(kolkata.sql).not.toContain('FROM sealed_visitors')
    expect(kolkata.sql).not.toMatch(/FROM events\b/)
  })

  it('reads the hours its buckets or window start inside off the half hour from the events, each once', async () => {
    const kathmandu = await explained({ range: '30d', interval: 'day', timezone: 'Asia/Kathmandu', previous: 'true' })
    const holes = kathmandu.params.holes as unknown as string[]
    // 30 days of local midnights at 18:15 UTC in each window, the current window's start among them.
    expect(holes.length).toBeGreaterThanOrEqual(59)
    expect(new Set(holes).size).toBe(holes.length)
    expect(holes.every((t) => t.endsWith(' 18:00:00'))).toBe(true)
    expect(kathmandu.params.halves).toBeUndefined()
    expect(kathmandu.sql).toContain('FROM sealed_visitors')
    const instants = await explained({ startDate: '2026-04-02T07:13:00Z', endDate: '2026-04-13T16:41:00Z', interval: 'day' })
    expect(instants.params.holes).toBeUndefined()
    expect(instants.params.rollup_from).toBe('2026-04-02 08:00:00.000')
    // Its first and last minutes from the events: half hours beside them would save no read.
    expect(instants.params.halves).toBeUndefined()
    // Kolkata's days before C start and end on the half hour: every hour from the rollups.
    const days = await explained({ startDate: '2026-04-02', endDate: '2026-04-13', interval: 'day', timezone: 'Asia/Kolkata' })
    const halves = days.params.halves as unknown as string[]
    expect([halves[0], halves.at(-1)]).toEqual(['2026-04-01 18:30:00', '2026-04-13 18:00:00'])
    expect([days.params.sealed_from, days.params.sealed_to]).toEqual(['2026-04-01 18:30:00.000', '2026-04-13 18:30:00.000'])
    expect(days.sql).not.toMatch(/FROM events\b/)
  })
})

describe('a build of an older format', () => {
  it('answers nothing, however new: builds made before the event rollups lack them', async () => {
    const url = `http://quarry.test/export/charts?${new URLSearchParams({ projectId: U, series: JSON.stringify([{ name: '*', segment: 'event' }]), interval: 'day', range: '30d', timezone: 'UTC' })}`
    await h.rt.runner.command({
      name: 'older_format',
      sql: `INSERT INTO sealed_builds SELECT * REPLACE (version + 1 AS version, 0 AS format) FROM sealed_builds WHERE project_id = {p:String} ORDER BY version DESC LIMIT 1`,
      params: { p: U },
    })
    const sealed = new SealedHistory({ runner: h.rt.runner, logger: h.rt.logger, now: () => h.clock.now, queryTimeoutS: 10, rebuildIntervalMs: 3_600_000, insertsTtlMs: 0 })
    const app = testApp(h.rt, { now: () => h.clock.now, sealed })
    const root = await createClientRow(h.rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'root-format' })
    const reply = await requestAs(app, url, root)
    expect(reply.headers.get('x-quarry-sealed-until')).not.toBeNull()
    expect(reply.body).toEqual((await plain(url)).body)
    const [newest] = await h.rt.runner.rows<{ format: number }>({ name: 'newest', sql: 'SELECT format FROM sealed_builds WHERE project_id = {p:String} ORDER BY version DESC LIMIT 1', params: { p: U } }, { timeoutS: 10 })
    expect(newest!.format).toBe(0)
    await h.rt.runner.command({ name: 'drop_older_format', sql: 'ALTER TABLE sealed_builds DELETE WHERE project_id = {p:String} AND format = 0 SETTINGS mutations_sync = 1', params: { p: U } })
  })
})

describe('when the data changes under a build', () => {
  const series = JSON.stringify([{ name: '*', segment: 'user' }])
  const qs = new URLSearchParams({ projectId: U, series, interval: 'day', startDate: '2026-04-01', endDate: '2026-04-14', timezone: 'Europe/Stockholm', previous: 'true' })
  const c: Case = { label: 'late insert', url: `http://quarry.test/export/charts?${qs}`, name: '*', segment: 'user', interval: 'day', timezone: 'Europe/Stockholm' }
  it('a late insert before C is answered from the events until the next build, then sealed again', async () => {
    await insert([extra('cx-late', 'cx-late', '2026-04-12T11:00:00Z', { name: 'click' }), extra('cx-late', 'cx-late', '2026-04-13T11:00:00Z')])
    const after = await h.fetch(c.url)
    expect(after.headers.get('x-quarry-sealed-until')).toBeNull()
    expectModel(c, after)
    await h.sealed!.settled(U)
    await h.sealed!.build(U)
    const again = await h.fetch(c.url)
    expect(again.headers.get('x-quarry-sealed-until')).not.toBeNull()
    expectModel(c, again)
    expect(again.body).toEqual((await plain(c.url)).body)
  })
  it('events after C, from a profile the build numbered and from a new one, are counted once each', async () => {
    const url = `http://quarry.test/export/charts?${new URLSearchParams({ projectId: U, series: JSON.stringify([{ name: '*', segment: 'user' }]), interval: 'day', range: '7d', timezone: 'UTC' })}`
    await insert([extra('cx-late-2', 'cx-late', '2026-04-14T22:10:00Z'), extra('cx-after', 'cx-after', '2026-04-14T22:20:00Z'), extra('', 'cx-known', '2026-04-14T22:30:00Z', { name: 'click' })])
    const reply = await h.fetch(url)
    expect(reply.headers.get('x-quarry-sealed-until')).not.toBeNull()
    expect(reply.body).toEqual((await plain(url)).body)
    expectModel({ label: 'after C', url, name: '*', segment: 'user', interval: 'day', timezone: 'UTC' }, reply)
  })
})
