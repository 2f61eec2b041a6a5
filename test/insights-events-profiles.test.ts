/**
 * OpenPanel's event explorer and people routes (/events, /events/names|properties|property_values,
 * /profiles[/{id}[/sessions|/metrics]], /sessions), profile.* and has_profile filters on the
 * exports, and the export's profile and meta objects. Every expected value is computed here, in
 * plain TypeScript, from the rows this file inserts (identified, anonymous and row-less profiles,
 * a project in Asia/Tokyo).
 */
import { randomUUID } from 'node:crypto'
import { DateTime } from 'luxon'
import createClient from 'openapi-fetch'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../src/auth/clients.ts'
import { createProject } from '../src/projects.ts'
import type { paths } from './generated/quarry-api.js'
import type { EventRow } from './helpers/event-row.ts'
import { seededRandom } from './helpers/random.ts'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'

const TZ = 'Asia/Tokyo'
const PROJECT = 'iep'
const OTHER = 'iep-other'
const ORG = 'org-iep'
const NOW = DateTime.fromISO('2026-03-10T12:00:00.000Z', { zone: 'UTC' })

interface ProfileRow {
  id: string
  project_id: string
  groups: string[]
  is_external: boolean
  first_name: string
  last_name: string
  email: string
  avatar: string
  properties: Record<string, string>
  created_at: string
  last_seen_at: string
}
interface MetaRow {
  project_id: string
  name: string
  conversion: boolean
  color: string
  icon: string
  created_at: string
}

const ch = (t: DateTime) => t.toUTC().toFormat('yyyy-LL-dd HH:mm:ss.SSS')
const at = (r: { created_at: string }) => DateTime.fromFormat(r.created_at, 'yyyy-LL-dd HH:mm:ss.SSS', { zone: 'UTC' })
const iso = (text: string) => `${text.replace(' ', 'T')}Z`
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
/** Map.groupBy, which Node 20 lacks. */
function groupBy<T>(list: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>()
  for (const item of list) {
    const k = key(item)
    out.set(k, [...(out.get(k) ?? []), item])
  }
  return out
}

type Row = EventRow & { groups: string[] }

const events: Row[] = []
const profiles: ProfileRow[] = []
const metas: MetaRow[] = []

function generate() {
  const rnd = seededRandom(20)
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!
  let serial = 0
  for (let s = 0; s < 70; s++) {
    const device = `d${Math.floor(rnd() * 20)}`
    const n = Number(device.slice(1))
    // d0–d7 identify as u0–u7: whole sessions, or from their second event on (a sign-in).
    const mode = n < 8 ? pick(['anon', 'ident', 'mixed'] as const) : 'anon'
    const start = NOW.minus({ seconds: Math.floor(rnd() * 40 * 86_400) }).startOf('second')
    const count = 1 + Math.floor(rnd() * 6)
    const [country, city] = pick([['SE', 'Lund'], ['JP', 'Tokyo'], ['US', 'Boston'], ['', '']] as const)
    for (let k = 0; k < count; k++) {
      const identified = mode === 'ident' || (mode === 'mixed' && k > 0)
      const name = k === 0 ? 'screen_view' : pick(['screen_view', 'screen_view', 'click', 'signup', 'revenue'] as const)
      const properties: Record<string, string> = { plan: pick(['free', 'pro']) }
      if (rnd() < 0.3) properties['__query.utm_source'] = 'google'
      if (rnd() < 0.2) properties.empty = ''
      if (rnd() < 0.1) properties.__duration_from = 'x'
      events.push({
        id: randomUUID(),
        name,
        device_id: device,
        profile_id: identified ? `u${n}` : device,
        project_id: PROJECT,
        session_id: `s${s}`,
        // Every seventh session's events belong to a group, some to two.
        groups: s % 7 === 0 ? (k % 2 ? ['org_acme', 'org_beta'] : ['org_acme']) : [],
        // Whole minutes apart, each event its own millisecond: no two instants are equal.
        created_at: ch(start.plus({ minutes: k * (1 + Math.floor(rnd() * 5)), milliseconds: serial++ })),
        path: `/p/${Math.floor(rnd() * 5)}`,
        origin: 'https://iep.test',
        referrer: '',
        referrer_name: '',
        referrer_type: '',
        duration: 0,
        revenue: name === 'revenue' ? 100 + Math.floor(rnd() * 900) : 0,
        properties,
        country,
        city,
        region: '',
        longitude: country === '' ? null : Math.floor(rnd() * 720) / 4 - 90,
        latitude: null,
        os: pick(['iOS', 'Android']),
        os_version: '',
        browser: pick(['Safari', 'Chrome']),
        browser_version: '',
        device: pick(['mobile', 'desktop']),
        brand: '',
        model: '',
        sdk_name: 'web',
        sdk_version: '1.0.0',
        imported_at: null,
      })
    }
  }
  // Server-side events outside any session, and another project's events of the same people.
  for (let i = 0; i < 4; i++) {
    events.push({ ...events[i]!, id: randomUUID(), session_id: '', name: 'signup', created_at: ch(NOW.minus({ hours: 3 + i, milliseconds: serial++ })) })
  }
  for (let i = 0; i < 6; i++) {
    events.push({ ...events[i]!, id: randomUUID(), project_id: OTHER, profile_id: 'u1', name: 'other_name', created_at: ch(NOW.minus({ hours: i, milliseconds: serial++ })) })
  }

  const profile = (id: string, days: number, fields: Partial<ProfileRow>): ProfileRow => ({
    id,
    project_id: PROJECT,
    groups: [],
    is_external: true,
    first_name: '',
    last_name: '',
    email: '',
    avatar: '',
    properties: {},
    created_at: ch(NOW.minus({ days, minutes: id.length })),
    last_seen_at: ch(NOW.minus({ days: 1 })),
    ...fields,
  })
  // u0's older version (silver) loses to its newer one under FINAL; u6 and u7 have no row.
  profiles.push(profile('u0', 50, { first_name: 'Alice', last_name: 'Smith', email: 'alice@old.test', properties: { tier: 'silver' }, last_seen_at: ch(NOW.minus({ days: 9 })) }))
  profiles.push(
    profile('u0', 50, {
      first_name: 'Alice',
      last_name: 'Smith',
      email: 'alice.smith@example.com',
      groups: ['org_acme'],
      avatar: 'https://a.test/alice.png',
      properties: { tier: 'gold', country: 'SE', 'address.city': 'Lund', 'address.zip': '22100' },
    }),
  )
  profiles.push(profile('u1', 45, { first_name: 'Bob', last_name: 'Jones', email: 'bob@example.org', properties: { tier: 'silver', country: 'JP' } }))
  profiles.push(profile('u2', 44, { first_name: 'Carol', last_name: 'Smithers', properties: { tier: 'gold', country: 'SE' } }))
  profiles.push(profile('u3', 43, { first_name: 'Dan', email: 'dan@EXAMPLE.com' }))
  profiles.push(profile('u4', 42, { first_name: 'Eve', last_name: 'Smith', email: 'eve@example.com', properties: { tier: 'gold' } }))
  profiles.push(profile('u5', 41, { first_name: 'Faye', email: 'faye@example.com' }))
  profiles.push(profile('ghost', 2, { first_name: 'Ghost', email: 'ghost@example.com', is_external: false }))
  profiles.push(profile('u1', 45, { project_id: OTHER, email: 'other@example.com', properties: { tier: 'gold' } }))
  metas.push({ project_id: PROJECT, name: 'signup', conversion: true, color: 'green', icon: 'user', created_at: '2026-01-02 03:04:05.678' })
  metas.push({ project_id: OTHER, name: 'click', conversion: false, color: 'red', icon: 'x', created_at: '2026-01-02 03:04:05.000' })
}
generate()

// ---------------------------------------------------------------------------------------------
// The reference model.

const own = events.filter((e) => e.project_id === PROJECT)
const newestFirst = <T extends { created_at: string }>(a: T, b: T) => byText(b.created_at, a.created_at)

function stored(id: string): ProfileRow | undefined {
  return profiles.filter((p) => p.project_id === PROJECT && p.id === id).sort((a, b) => byText(b.last_seen_at, a.last_seen_at))[0]
}

/** The 30d window in Tokyo: from 00:00 thirty days ago to the coming midnight. */
const today = NOW.setZone(TZ).startOf('day')
const WINDOW = { start: today.minus({ days: 30 }), end: today.plus({ days: 1 }) }
const inWindow = (r: { created_at: string }, w = WINDOW) => at(r) >= w.start && at(r) < w.end

interface Session {
  id: string
  profile_id: string
  device_id: string
  created_at: string
  ended_at: string
  duration: number
  is_bounce: boolean
  screen_view_count: number
  event_count: number
  revenue: number
  entry_path: string
  exit_path: string
  country: string
  /** The union of its events' groups, sorted. */
  groups: string[]
  events: Row[]
}

const sessions: Session[] = [...groupBy(own.filter((e) => e.session_id !== ''), (e) => e.session_id)].map(([id, list]) => {
  const sorted = [...list].sort((a, b) => byText(a.created_at, b.created_at))
  const views = sorted.filter((e) => e.name === 'screen_view')
  const first = sorted[0]!
  const last = sorted.at(-1)!
  return {
    id,
    profile_id: first.profile_id,
    device_id: first.device_id,
    created_at: first.created_at,
    ended_at: last.created_at,
    duration: at(last).toMillis() - at(first).toMillis(),
    is_bounce: views.length <= 1,
    screen_view_count: views.length,
    event_count: sorted.length,
    revenue: sorted.filter((e) => e.name === 'revenue').reduce((s, e) => s + e.revenue, 0),
    entry_path: views[0]?.path ?? '',
    exit_path: views.at(-1)?.path ?? '',
    country: first.country,
    groups: [...new Set(sorted.flatMap((e) => e.groups))].sort(),
    events: sorted,
  }
})
const sessionView = (s: Session) => {
  const { events: _events, ...rest } = s
  return rest
}

/** PERCENTILE.INC, as quantileExactInclusive. */
function p90(values: number[]): number {
  const v = [...values].sort((a, b) => a - b)
  const h = (v.length - 1) * 0.9
  const lo = Math.floor(h)
  return v[lo]! + (h - lo) * ((v[lo + 1] ?? v[lo]!) - v[lo]!)
}

const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d

function expectedMetrics(id: string) {
  const mine = own.filter((e) => e.profile_id === id)
  const visits = sessions.filter((s) => s.events.some((e) => e.profile_id === id))
  const p = stored(id)
  const starts = visits.map((s) => at(s).toMillis())
  const n = visits.length
  return {
    profileId: id,
    firstSeen: p ? iso(p.created_at) : null,
    lastSeen: p ? iso(p.last_seen_at) : null,
    sessions: n,
    screenViews: mine.filter((e) => e.name === 'screen_view').length,
    totalEvents: mine.length,
    conversionEvents: mine.filter((e) => !['screen_view', 'session_start', 'session_end'].includes(e.name)).length,
    uniqueDaysActive: new Set(mine.map((e) => at(e).setZone(TZ).toISODate())).size,
    avgSessionDurationMin: n ? round(visits.reduce((s, v) => s + v.duration, 0) / n / 60_000, 2) : null,
    p90SessionDurationMin: n ? round(p90(visits.map((v) => v.duration)) / 60_000, 2) : null,
    avgEventsPerSession: n ? round(mine.length / n, 2) : null,
    avgTimeBetweenSessionsSec: n > 1 ? round((Math.max(...starts) - Math.min(...starts)) / 1000 / (n - 1), 1) : 0,
    bounceRate: n ? round((visits.filter((v) => v.is_bounce).length * 100) / n, 4) : null,
    revenue: mine.filter((e) => e.name === 'revenue').reduce((s, e) => s + e.revenue, 0),
  }
}

const rawProfile = (p: ProfileRow) => ({
  id: p.id,
  first_name: p.first_name,
  last_name: p.last_name,
  email: p.email,
  avatar: p.avatar,
  properties: p.properties,
  project_id: p.project_id,
  is_external: p.is_external,
  created_at: p.created_at,
  last_seen_at: p.last_seen_at,
  groups: p.groups,
})
const storedProfiles = [...new Set(profiles.filter((p) => p.project_id === PROJECT).map((p) => p.id))].map((id) => stored(id)!)

// ---------------------------------------------------------------------------------------------

let rt: TestRuntime
let app: ReturnType<typeof testApp>
let headers: Record<string, string>

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000' })
  await createProject(rt.runner, { id: PROJECT, name: 'IEP', timezone: TZ, organizationId: ORG })
  await createProject(rt.runner, { id: OTHER, name: 'Other', timezone: 'UTC', organizationId: ORG })
  const client = await createClientRow(rt.runner, { type: 'read', projectId: PROJECT, organizationId: ORG, name: 'iep-reader' })
  headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
  // Two inserts: sessions split across parts, merged by FINAL.
  for (let i = 0; i < 2; i++) await rt.engine.client.insert({ table: 'events', values: events.filter((_, j) => j % 2 === i), format: 'JSONEachRow' })
  await rt.engine.client.insert({ table: 'profiles', values: profiles, format: 'JSONEachRow' })
  await rt.engine.client.insert({ table: 'event_meta', values: metas, format: 'JSONEachRow' })
  app = testApp(rt, { now: () => NOW.toJSDate() })
})

afterAll(async () => {
  await rt?.dispose()
})

const q = (params: Record<string, unknown>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)])).toString()

async function get(path: string, params: Record<string, unknown> = {}) {
  const res = await app.request(`/insights/${PROJECT}/${path}?${q(params)}`, { headers })
  return { status: res.status, body: (await res.json()) as any, headers: res.headers }
}

async function badRequest(path: string, params: Record<string, unknown>, detailPath: string) {
  const { status, body } = await get(path, params)
  expect(status, JSON.stringify(body)).toBe(400)
  expect(body).toMatchObject({ status: 400, code: 'invalid_parameters' })
  expect(body.details.map((d: { path: string }) => d.path)).toContain(detailPath)
}

describe('GET /insights/{projectId}/events', () => {
  const raw = (e: Row) => ({ ...e, longitude: e.longitude, imported_at: null })

  it('the last 30 Tokyo days, newest first, 20 raw rows by default', async () => {
    const expected = own.filter((e) => inWindow(e)).sort(newestFirst)
    expect(expected.length).toBeGreaterThan(100)
    const { status, body, headers: h } = await get('events')
    expect(status).toBe(200)
    expect(body).toHaveLength(20)
    body.forEach((row: unknown, i: number) => expect(row).toMatchObject(raw(expected[i]!)))
    expect(h.get('X-Quarry-Timezone')).toBe(TZ)
  })

  it('event names, exact-match parameters, properties and filters AND; a date-only end keeps its day', async () => {
    const endDay = today.minus({ days: 3 })
    const params = {
      startDate: endDay.minus({ days: 20 }).toISODate(),
      endDate: endDay.toISODate(),
      eventNames: ['screen_view', 'click'],
      country: 'SE',
      properties: { plan: 'pro' },
      filters: [{ name: 'os', operator: 'is', value: ['iOS'] }],
      limit: 100,
    }
    const w = { start: endDay.minus({ days: 20 }), end: endDay.plus({ days: 1 }) }
    const expected = own
      .filter((e) => inWindow(e, w) && ['screen_view', 'click'].includes(e.name) && e.country === 'SE' && e.properties.plan === 'pro' && e.os === 'iOS')
      .sort(newestFirst)
    expect(expected.length).toBeGreaterThan(2)
    const { body } = await get('events', params)
    expect(body.map((r: Row) => r.id)).toEqual(expected.map((e) => e.id))
    // The whole last day counts (OpenPanel's date-only end means its first instant).
    const lastDay = await get('events', { startDate: endDay.toISODate(), endDate: endDay.toISODate(), limit: 100 })
    expect(lastDay.body.map((r: Row) => r.id)).toEqual(own.filter((e) => inWindow(e, { start: endDay, end: endDay.plus({ days: 1 }) })).sort(newestFirst).map((e) => e.id))
  })

  it('profile.* and has_profile filters, and the profileId parameter', async () => {
    const cases: [unknown[], (e: Row) => boolean][] = [
      [[{ name: 'profile.properties.tier', operator: 'is', value: ['gold'] }], (e) => stored(e.profile_id)?.properties.tier === 'gold'],
      [[{ name: 'profile.email', operator: 'isNull', value: [] }], (e) => (stored(e.profile_id)?.email ?? '') === ''],
      [[{ name: 'profile.lastName', operator: 'contains', value: ['mith'] }], (e) => (stored(e.profile_id)?.last_name ?? '').includes('mith')],
      [[{ name: 'has_profile', operator: 'is', value: [true] }], (e) => e.profile_id !== e.device_id],
      [[{ name: 'has_profile', operator: 'is', value: ['false'] }], (e) => e.profile_id === e.device_id],
    ]
    for (const [filters, keep] of cases) {
      const { body } = await get('events', { filters, limit: 100, startDate: '2026-01-01', endDate: '2026-03-31' })
      const expected = own.filter(keep).sort(newestFirst).slice(0, 100)
      expect(expected.length, JSON.stringify(filters)).toBeGreaterThan(0)
      expect(body.map((r: Row) => r.id), JSON.stringify(filters)).toEqual(expected.map((e) => e.id))
    }
    const { body } = await get('events', { profileId: 'u1', limit: 100, startDate: '2026-01-01', endDate: '2026-03-31' })
    expect(body.map((r: Row) => r.id)).toEqual(own.filter((e) => e.profile_id === 'u1').sort(newestFirst).map((e) => e.id))
  })

  it('bad input is a 400 naming the parameter', async () => {
    await badRequest('events', { limit: 101 }, 'limit')
    await badRequest('events', { properties: { plan: 1 } }, 'properties.plan')
    await badRequest('events', { startDate: 'soon' }, 'startDate')
    await badRequest('events', { filters: [{ name: 'profile.nope', operator: 'is', value: ['x'] }] }, 'filters.0.name')
    await badRequest('events', { filters: [{ name: 'has_profile', operator: 'contains', value: ['true'] }] }, 'filters.0.operator')
    await badRequest('events', { filters: [{ name: 'has_profile', operator: 'is', value: ['maybe'] }] }, 'filters.0.value')
    await badRequest('events', { colour: 'red' }, 'colour')
  })
})

describe('GET /insights/{projectId}/events/names|properties|property_values', () => {
  it('names: the 50 most frequent, by exact count, ties by name', async () => {
    const counts = [...groupBy(own, (e) => e.name)].map(([name, list]) => [name, list.length] as const)
    const expected = counts.sort((a, b) => b[1] - a[1] || byText(a[0], b[0])).slice(0, 50).map(([name]) => name)
    expect((await get('events/names')).body).toEqual(expected)
  })

  it('properties: keys with a value per event name, sorted; one event name', async () => {
    const pairs = (list: Row[]) => {
      const set = new Set<string>()
      for (const e of list) for (const [k, v] of Object.entries(e.properties)) if (v !== '' && k !== '__duration_from') set.add(`${k}\u0000${e.name}`)
      return [...set]
        .map((s) => s.split('\u0000'))
        .sort((a, b) => byText(a[0]!, b[0]!) || byText(a[1]!, b[1]!))
        .map(([property_key, event_name]) => ({ property_key, event_name }))
    }
    const all = await get('events/properties')
    expect(all.body.columns).toContain('referrer_name')
    expect(all.body.columns).toHaveLength(22)
    expect(all.body.properties).toEqual(pairs(own))
    expect((await get('events/properties', { eventName: 'click' })).body.properties).toEqual(pairs(own.filter((e) => e.name === 'click')))
  })

  it('property_values: distinct non-empty values, most recently seen first; both names required', async () => {
    for (const key of ['plan', 'empty', '__query.utm_source', 'missing']) {
      const last = new Map<string, string>()
      for (const e of own.filter((x) => x.name === 'screen_view')) {
        const v = e.properties[key]
        if (v && (last.get(v) ?? '') < e.created_at) last.set(v, e.created_at)
      }
      const expected = [...last].sort((a, b) => byText(b[1], a[1]) || byText(a[0], b[0])).map(([v]) => v)
      const { body } = await get('events/property_values', { eventName: 'screen_view', propertyKey: key })
      expect(body).toEqual({ event: 'screen_view', property: key, values: expected })
    }
    await badRequest('events/property_values', { eventName: 'screen_view' }, 'propertyKey')
  })
})

describe('GET /insights/{projectId}/profiles', () => {
  const list = (keep: (p: ProfileRow) => boolean, order: 'asc' | 'desc' = 'desc') =>
    storedProfiles
      .filter(keep)
      .sort((a, b) => (order === 'desc' ? -1 : 1) * (byText(a.created_at, b.created_at) || byText(a.id, b.id)))
      .map(rawProfile)

  it('stored profiles by first seen; search, properties, activity and profile filters', async () => {
    expect((await get('profiles')).body).toEqual(list(() => true))
    expect((await get('profiles', { sortOrder: 'asc', limit: 3 })).body).toEqual(list(() => true, 'asc').slice(0, 3))
    const words = (p: ProfileRow, ws: string[]) => ws.every((w) => [p.id, p.email, p.first_name, p.last_name].some((c) => c.toLowerCase().includes(w.toLowerCase())))
    expect((await get('profiles', { name: 'SMITH a' })).body).toEqual(list((p) => words(p, ['SMITH', 'a'])))
    expect((await get('profiles', { email: 'EXAMPLE.com' })).body).toEqual(list((p) => p.email.toLowerCase().includes('example.com')))
    expect((await get('profiles', { country: 'SE' })).body).toEqual(list((p) => p.properties.country === 'SE'))
    const since = NOW.minus({ days: 5 })
    expect((await get('profiles', { inactiveDays: 5 })).body).toEqual(list((p) => !own.some((e) => e.profile_id === p.id && at(e) >= since)))
    const sessionsOf = (id: string) => new Set(own.filter((e) => e.profile_id === id && e.session_id !== '').map((e) => e.session_id)).size
    expect((await get('profiles', { minSessions: 3 })).body).toEqual(list((p) => sessionsOf(p.id) >= 3))
    expect((await get('profiles', { performedEvent: 'revenue' })).body).toEqual(list((p) => own.some((e) => e.profile_id === p.id && e.name === 'revenue')))
    const gold = [{ name: 'profile.properties.tier', operator: 'is', value: ['gold'] }]
    expect((await get('profiles', { filters: gold })).body).toEqual(list((p) => p.properties.tier === 'gold'))
  })

  it('bad input is a 400', async () => {
    await badRequest('profiles', { sortOrder: 'sideways' }, 'sortOrder')
    await badRequest('profiles', { name: 'a b c d e f' }, 'name')
    await badRequest('profiles', { filters: [{ name: 'country', operator: 'is', value: ['SE'] }] }, 'filters.0.name')
    await badRequest('profiles', { inactiveDays: 0 }, 'inactiveDays')
  })
})

describe('GET /insights/{projectId}/profiles/{profileId}[/sessions|/metrics]', () => {
  const recent = (id: string, n = 20) => own.filter((e) => e.profile_id === id).sort(newestFirst).slice(0, n)

  it('a stored profile (its newest version) with its latest events', async () => {
    const { status, body } = await get('profiles/u0', { eventLimit: 5 })
    expect(status).toBe(200)
    expect(body.profile).toEqual(rawProfile(stored('u0')!))
    expect(body.recentEvents.map((e: Row) => e.id)).toEqual(recent('u0', 5).map((e) => e.id))
  })

  it('a visitor with events but no row gets the empty profile; no row and no event is a 404', async () => {
    for (const id of ['u6', 'd15']) {
      const mine = own.filter((e) => e.profile_id === id).sort((a, b) => byText(a.created_at, b.created_at))
      expect(mine.length, id).toBeGreaterThan(0)
      const { body } = await get(`profiles/${id}`)
      expect(body.profile).toEqual({
        id,
        first_name: '',
        last_name: '',
        email: '',
        avatar: '',
        properties: {},
        project_id: PROJECT,
        is_external: id === 'u6',
        created_at: mine[0]!.created_at,
        last_seen_at: mine.at(-1)!.created_at,
        groups: [],
      })
      expect(body.recentEvents.map((e: Row) => e.id)).toEqual(recent(id).map((e) => e.id))
    }
    const missing = await app.request(`/insights/${PROJECT}/profiles/nobody`, { headers })
    expect(missing.status).toBe(404)
    expect(await missing.json()).toMatchObject({ status: 404, code: 'profile_not_found' })
    await badRequest('profiles/u0', { eventLimit: 500 }, 'eventLimit')
  })

  it('sessions holding an event of the profile, newest first', async () => {
    for (const id of ['u0', 'u1', 'd12', 'nobody']) {
      const expected = sessions.filter((s) => s.events.some((e) => e.profile_id === id)).sort(newestFirst)
      const { body } = await get(`profiles/${id}/sessions`, { limit: 100 })
      expect(body.map(sessionOut)).toEqual(expected.map(sessionView))
      if (id === 'u0') expect(expected.some((s) => s.profile_id !== 'u0')).toBe(true)
    }
  })

  it('metrics over all time, in the project timezone; an unknown profile has zeros and nulls', async () => {
    for (const id of ['u0', 'u1', 'u2', 'u6', 'd3', 'ghost', 'nobody']) {
      expect((await get(`profiles/${id}/metrics`)).body, id).toEqual(expectedMetrics(id))
    }
    expect(expectedMetrics('u1').sessions).toBeGreaterThan(1)
  })
})

/** The keys the model has from a response's session row, its groups (a set) sorted. */
function sessionOut(row: Record<string, unknown>) {
  const picked = Object.fromEntries(Object.keys(sessionView(sessions[0]!)).map((k) => [k, row[k]]))
  return { ...picked, groups: [...(row.groups as string[])].sort() }
}

describe('GET /insights/{projectId}/sessions', () => {
  it('sessions begun in the window, newest first, with exact-match parameters and filters', async () => {
    const inWin = sessions.filter((s) => inWindow(s)).sort(newestFirst)
    const { body } = await get('sessions', { limit: 100 })
    expect(body.map(sessionOut)).toEqual(inWin.slice(0, 100).map(sessionView))
    expect(body[0]).toMatchObject({ longitude: null, latitude: null })
    expect(inWin.some((x) => x.groups.length === 2) && inWin.some((x) => x.groups.length === 0)).toBe(true)
    const se = await get('sessions', { country: 'SE', profileId: 'u0', limit: 100 })
    expect(se.body.map((s: Session) => s.id)).toEqual(inWin.filter((s) => s.country === 'SE' && s.events.some((e) => e.profile_id === 'u0')).map((s) => s.id))
    const gold = await get('sessions', { filters: [{ name: 'profile.properties.tier', operator: 'is', value: ['gold'] }], limit: 100 })
    expect(gold.body.map((s: Session) => s.id)).toEqual(inWin.filter((s) => s.events.some((e) => stored(e.profile_id)?.properties.tier === 'gold')).map((s) => s.id))
    // OpenPanel's session.* filters: the session's own figures.
    const own = [
      [{ name: 'session.is_bounce', operator: 'is', value: [true] }, (x: Session) => x.is_bounce],
      [{ name: 'session.is_bounce', operator: 'isNot', value: ['true'] }, (x: Session) => !x.is_bounce],
      [{ name: 'session.screen_view_count', operator: 'gte', value: [3] }, (x: Session) => x.screen_view_count >= 3],
      [{ name: 'session.duration', operator: 'lt', value: ['600000'] }, (x: Session) => x.duration < 600_000],
      [{ name: 'session.event_count', operator: 'is', value: [2, 4] }, (x: Session) => [2, 4].includes(x.event_count)],
      [{ name: 'session.revenue', operator: 'gt', value: [0] }, (x: Session) => x.revenue > 0],
      [{ name: 'session.performed_event', operator: 'is', value: ['signup'] }, (x: Session) => x.events.some((e) => e.name === 'signup')],
      [{ name: 'session.performed_event', operator: 'isNot', value: ['click', 'revenue'] }, (x: Session) => !x.events.some((e) => ['click', 'revenue'].includes(e.name))],
    ] as const
    for (const [filter, keep] of own) {
      const { body } = await get('sessions', { filters: [filter], limit: 100 })
      const expected = inWin.filter(keep).map((x) => x.id)
      expect(expected.length, JSON.stringify(filter)).toBeGreaterThan(0)
      expect(body.map((x: Session) => x.id), JSON.stringify(filter)).toEqual(expected)
    }
    // Errors name the filter by its place in the request's filters, whatever the exact-match parameters.
    await badRequest('sessions', { country: 'SE', filters: [{ name: 'session.is_bounce', operator: 'is', value: ['maybe'] }, { name: 'nope', operator: 'is', value: ['x'] }] }, 'filters.1.name')
    await badRequest('sessions', { filters: [{ name: 'session.is_bounce', operator: 'is', value: ['maybe'] }] }, 'filters.0.value')
    await badRequest('sessions', { filters: [{ name: 'session.duration', operator: 'contains', value: ['1'] }] }, 'filters.0.value')
    await badRequest('events', { country: 'SE', filters: [{ name: 'nope', operator: 'is', value: ['x'] }] }, 'filters.0.name')
    await badRequest('sessions', { limit: 0 }, 'limit')
    await badRequest('sessions', { endDate: '2026-02-30' }, 'endDate')
  })
})

describe('profile.* and has_profile on the session-based insights routes', () => {
  it('keep the sessions with an event of a matching profile', async () => {
    const inWin = sessions.filter((x) => inWindow(x))
    const cases = [
      [{ name: 'profile.properties.tier', operator: 'is', value: ['gold'] }, (e: Row) => stored(e.profile_id)?.properties.tier === 'gold'],
      [{ name: 'has_profile', operator: 'is', value: ['false'] }, (e: Row) => e.profile_id === e.device_id],
    ] as const
    for (const [filter, keep] of cases) {
      const { status, body } = await get('metrics', { range: '30d', filters: [filter] })
      expect(status, JSON.stringify(body)).toBe(200)
      const kept = inWin.filter((x) => x.events.some(keep))
      expect(kept.length).toBeLessThan(inWin.length)
      expect(body.metrics.total_sessions, JSON.stringify(filter)).toBe(kept.length)
      // The breakdown names an empty country null.
      const byCountry = await get('country', { range: '30d', filters: [filter], limit: 100 })
      const counts = groupBy(kept, (x) => x.country)
      expect(Object.fromEntries(byCountry.body.map((r: { name: string | null; sessions: number }) => [r.name ?? '', r.sessions]))).toEqual(
        Object.fromEntries([...counts].map(([k, v]) => [k, v.length])),
      )
    }
  })
})

describe('profile.* and has_profile on the exports; the profile and meta objects', () => {
  async function exportPage(params: Record<string, unknown>) {
    const res = await app.request(`/export/events?${q({ start: '2026-01-01', end: '2026-03-31', limit: 1000, ...params })}`, { headers })
    expect(res.status).toBe(200)
    return (await res.json()) as { meta: { totalCount: number }; data: Record<string, any>[] }
  }

  it('export filters count what the rows say', async () => {
    const cases: [unknown, (e: Row) => boolean][] = [
      [{ name: 'profile.properties.tier', operator: 'isNot', value: ['gold'] }, (e) => stored(e.profile_id)?.properties.tier !== 'gold'],
      [{ name: 'profile.properties.address.city', operator: 'is', value: ['Lund'] }, (e) => stored(e.profile_id)?.properties['address.city'] === 'Lund'],
      [{ name: 'profile.createdAt', operator: 'lt', value: [ch(NOW.minus({ days: 44 }))] }, (e) => (stored(e.profile_id)?.created_at ?? '1970') < ch(NOW.minus({ days: 44 }))],
      [{ name: 'has_profile', operator: 'isNot', value: ['true'] }, (e) => e.profile_id === e.device_id],
    ]
    for (const [filter, keep] of cases) {
      const p = await exportPage({ filters: [filter] })
      expect(p.meta.totalCount, JSON.stringify(filter)).toBe(own.filter(keep).length)
      expect(new Set(p.data.map((d) => d.id))).toEqual(new Set(own.filter(keep).map((e) => e.id)))
    }
  })

  it('chart series filtered by has_profile and profile.* count those events', async () => {
    for (const filter of [{ name: 'has_profile', operator: 'is', value: ['true'] }, { name: 'profile.properties.tier', operator: 'is', value: ['gold'] }]) {
      const series = [{ name: '*', filters: [filter] }]
      const res = await app.request(`/export/charts?${q({ projectId: PROJECT, startDate: '2026-01-01', endDate: '2026-03-31', series })}`, { headers })
      const body = (await res.json()) as any
      expect(res.status, JSON.stringify(body)).toBe(200)
      const keep = filter.name === 'has_profile' ? (e: Row) => e.profile_id !== e.device_id : (e: Row) => stored(e.profile_id)?.properties.tier === 'gold'
      expect(body.series[0].metrics.sum).toBe(own.filter(keep).length)
    }
  })

  it('profile: the full object (nested properties) or the empty one; meta with id and updatedAt', async () => {
    const p = await exportPage({ includes: 'profile,meta' })
    expect(p.data).toHaveLength(own.length)
    const byId = new Map(own.map((e) => [e.id, e]))
    const metaIds = new Set<string>()
    for (const d of p.data) {
      const e = byId.get(d.id)!
      const row = stored(e.profile_id)
      const nested: Record<string, any> = {}
      for (const [k, v] of Object.entries(row?.properties ?? {})) {
        const parts = k.split('.')
        let node = nested
        for (const part of parts.slice(0, -1)) node = node[part] ??= {}
        node[parts.at(-1)!] = v
      }
      expect(d.profile).toEqual({
        id: e.profile_id,
        email: row?.email ?? '',
        avatar: row?.avatar ?? '',
        firstName: row?.first_name ?? '',
        lastName: row?.last_name ?? '',
        createdAt: iso(row?.created_at ?? e.created_at),
        lastSeenAt: iso(row?.last_seen_at ?? e.created_at),
        isExternal: row ? row.is_external : e.profile_id !== e.device_id,
        projectId: PROJECT,
        groups: row?.groups ?? [],
        properties: nested,
      })
      const m = metas.find((x) => x.project_id === PROJECT && x.name === e.name)
      if (!m) expect(d.meta).toBeNull()
      else {
        expect(d.meta).toMatchObject({ name: m.name, conversion: m.conversion, color: m.color, icon: m.icon, projectId: PROJECT, createdAt: iso(m.created_at), updatedAt: iso(m.created_at) })
        metaIds.add(d.meta.id)
      }
    }
    expect(p.data.find((d) => d.profileId === 'u0')!.profile.properties).toEqual({ tier: 'gold', country: 'SE', address: { city: 'Lund', zip: '22100' } })
    // One stable id per event name.
    expect(metaIds.size).toBe(1)
    expect([...metaIds][0]).toMatch(/^[0-9a-f-]{36}$/)
  })
})

describe('through the generated client', () => {
  const client = () =>
    createClient<paths>({ baseUrl: 'http://quarry.test', fetch: async (req) => app.fetch(req), headers, querySerializer: (p) => q(p as Record<string, unknown>) })

  it('calls every route with typed parameters and results', async () => {
    const c = client()
    const path = { projectId: PROJECT }
    const ev = await c.GET('/insights/{projectId}/events', { params: { path, query: { limit: 3, eventNames: 'screen_view' } } })
    expect(ev.data?.map((e) => e.name)).toEqual(['screen_view', 'screen_view', 'screen_view'])
    const names = await c.GET('/insights/{projectId}/events/names', { params: { path } })
    expect(names.data?.[0]).toBe('screen_view')
    const props = await c.GET('/insights/{projectId}/events/properties', { params: { path, query: { eventName: 'signup' } } })
    expect(props.data?.properties.every((p) => p.event_name === 'signup')).toBe(true)
    const values = await c.GET('/insights/{projectId}/events/property_values', { params: { path, query: { eventName: 'click', propertyKey: 'plan' } } })
    expect(values.data?.values.length).toBeGreaterThan(0)
    const list = await c.GET('/insights/{projectId}/profiles', { params: { path, query: { limit: 2 } } })
    expect(list.data?.map((p) => p.id)).toEqual(storedProfiles.sort((a, b) => byText(b.created_at, a.created_at)).slice(0, 2).map((p) => p.id))
    const one = await c.GET('/insights/{projectId}/profiles/{profileId}', { params: { path: { ...path, profileId: 'u1' }, query: {} } })
    expect(one.data?.profile.email).toBe('bob@example.org')
    const missing = await c.GET('/insights/{projectId}/profiles/{profileId}', { params: { path: { ...path, profileId: 'nobody' }, query: {} } })
    expect(missing.error?.code).toBe('profile_not_found')
    const visits = await c.GET('/insights/{projectId}/profiles/{profileId}/sessions', { params: { path: { ...path, profileId: 'u1' }, query: {} } })
    expect(visits.data?.length).toBe(sessions.filter((s) => s.events.some((e) => e.profile_id === 'u1')).length)
    const metrics = await c.GET('/insights/{projectId}/profiles/{profileId}/metrics', { params: { path: { ...path, profileId: 'u1' } } })
    expect(metrics.data).toEqual(expectedMetrics('u1'))
    const all = await c.GET('/insights/{projectId}/sessions', { params: { path, query: { limit: 1 } } })
    expect(all.data?.[0]?.id).toBe(sessions.filter((s) => inWindow(s)).sort(newestFirst)[0]!.id)
  })
})
