import { randomUUID } from 'node:crypto'
import { gunzipSync } from 'node:zlib'
import { DateTime } from 'luxon'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../src/auth/clients.ts'
import { createProject } from '../src/projects.ts'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'
import type { EventRow as StoredEvent } from './helpers/event-row.ts'
import { seededRandom } from './helpers/random.ts'
import { parseCsv } from './helpers/csv.ts'

// Expected values are computed here, in plain TypeScript, from the rows this file inserts.

const TZ = 'America/New_York' // DST starts 2026-03-08 inside the data: days are 23 h long there
const PROJECT = 'exp'
const OTHER = 'exp-other'
const ORG = 'org-export'
const NOW = DateTime.fromISO('2026-03-10T12:00:00.000Z', { zone: 'UTC' })
/** The default window starts 30 calendar days before now in the project's timezone (here 29 days 23 h: DST). */
/** No start: all time, as OpenPanel. */
const DEFAULT_FROM = DateTime.fromMillis(0, { zone: TZ })
/** The default window before OpenPanel's convention was followed; events either side of it stay in the fixture. */
const THIRTY_DAYS = NOW.setZone(TZ).minus({ days: 30 })

type EventRow = StoredEvent & { imported_at: string | null }

interface ProfileRow {
  id: string
  project_id: string
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

const chInstant = (t: DateTime) => t.toUTC().toFormat('yyyy-LL-dd HH:mm:ss.SSS')
const instantOf = (row: { created_at: string }) => DateTime.fromFormat(row.created_at, 'yyyy-LL-dd HH:mm:ss.SSS', { zone: 'UTC' })
const isoOf = (chText: string) => `${chText.replace(' ', 'T')}Z`

/** ClickHouse orders UUIDs by their second 64-bit half first, then the first. */
const uuidKey = (id: string) => {
  const hex = id.replace(/-/g, '')
  return hex.slice(16) + hex.slice(0, 16)
}
/** The export's order: created_at DESC, id ASC. */
const exportOrder = (a: EventRow, b: EventRow) =>
  a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : uuidKey(a.id) < uuidKey(b.id) ? -1 : 1

const rows: EventRow[] = []
const profiles: ProfileRow[] = []
const metas: MetaRow[] = []

function event(at: DateTime, fields: Partial<EventRow> = {}): EventRow {
  return {
    id: randomUUID(),
    name: 'screen_view',
    device_id: 'd0',
    profile_id: 'd0',
    project_id: PROJECT,
    session_id: 's0',
    created_at: chInstant(at),
    path: '/',
    origin: 'https://example.com',
    referrer: '',
    referrer_name: '',
    referrer_type: '',
    duration: 0,
    revenue: 0,
    properties: {},
    country: '',
    city: '',
    region: '',
    longitude: null,
    latitude: null,
    os: '',
    os_version: '',
    browser: '',
    browser_version: '',
    device: '',
    brand: '',
    model: '',
    sdk_name: '',
    sdk_version: '',
    imported_at: null,
    ...fields,
  }
}

function generate() {
  const rnd = seededRandom(7)
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!
  const names = ['screen_view', 'screen_view', 'click', 'purchase', 'signup'] as const
  const oses = ['iOS', 'Android', 'Windows', 'macOS'] as const
  const plans = ['free', 'pro', 'team'] as const
  // 320 instants for 520 events: many events share their created_at, so ids break ties.
  const instants = Array.from({ length: 320 }, () =>
    NOW.minus({ milliseconds: Math.floor(rnd() * 12 * 86_400_000) }).set({ millisecond: rnd() < 0.5 ? 0 : Math.floor(rnd() * 1000) }),
  )
  for (let i = 0; i < 520; i++) {
    const device = `d${Math.floor(rnd() * 30)}`
    // Devices d0–d9 identify as u0–u9 half of the time; the rest of their events are anonymous.
    const identified = Number(device.slice(1)) < 10 && rnd() < 0.5
    const properties: Record<string, string> = { plan: pick(plans) }
    if (rnd() < 0.4) properties['__query.utm_source'] = pick(['google', 'news/letter', 'x'])
    if (rnd() < 0.2) properties['quote"d'] = 'a,b\nc'
    const geo = rnd() < 0.7
    rows.push(
      event(pick(instants), {
        name: pick(names),
        device_id: device,
        profile_id: identified ? `u${device.slice(1)}` : device,
        session_id: `s${Math.floor(rnd() * 80)}`,
        path: `/p/${Math.floor(rnd() * 12)}`,
        origin: pick(['https://example.com', 'https://shop.example.com']),
        referrer: pick(['', 'https://google.com/', 'https://news.ycombinator.com/']),
        referrer_name: pick(['', 'Google', 'Hacker News']),
        referrer_type: pick(['', 'search', 'social']),
        duration: Math.floor(rnd() * 10_000),
        revenue: rnd() < 0.2 ? Math.floor(rnd() * 5000) : 0,
        properties,
        country: pick(['US', 'SE', 'DE', '']),
        city: pick(['New York', 'Stockholm', 'Berlin', '']),
        region: pick(['NY', 'AB', 'BE', '']),
        // Exactly representable as Float32, so the JSON number is the inserted one.
        longitude: geo ? Math.floor(rnd() * 720) / 4 - 90 : null,
        latitude: geo ? Math.floor(rnd() * 360) / 4 - 45 : null,
        os: pick(oses),
        os_version: pick(['17.1', '14', '11']),
        browser: pick(['Safari', 'Chrome', 'Firefox']),
        browser_version: pick(['17.1', '120.0']),
        device: pick(['mobile', 'desktop', 'tablet']),
        brand: pick(['Apple', 'Samsung', '']),
        model: pick(['iPhone', 'Galaxy', '']),
        sdk_name: pick(['web', 'ios']),
        sdk_version: pick(['1.0.0', '1.2.3']),
        imported_at: rnd() < 0.1 ? '2026-03-01 00:00:00' : null,
      }),
    )
  }
  // Boundaries for start/end with a time of day.
  rows.push(event(DateTime.fromISO('2026-03-06T08:15:30.500Z'), { name: 'edge', device_id: 'e1', profile_id: 'e1' }))
  rows.push(event(DateTime.fromISO('2026-03-06T08:15:30.501Z'), { name: 'edge', device_id: 'e1', profile_id: 'e1' }))
  rows.push(event(DateTime.fromISO('2026-03-05T10:30:00.000Z'), { name: 'edge', device_id: 'e1', profile_id: 'e1' }))
  rows.push(event(DateTime.fromISO('2026-03-05T10:29:59.999Z'), { name: 'edge', device_id: 'e1', profile_id: 'e1' }))
  // Local midnights around the DST change (2026-03-08 02:00 EST → 03:00 EDT).
  rows.push(event(DateTime.fromISO('2026-03-08T00:00:00', { zone: TZ }), { name: 'edge', device_id: 'e2', profile_id: 'e2' }))
  rows.push(event(DateTime.fromISO('2026-03-08T23:59:59.999', { zone: TZ }), { name: 'edge', device_id: 'e2', profile_id: 'e2' }))
  rows.push(event(DateTime.fromISO('2026-03-09T00:00:00', { zone: TZ }), { name: 'edge', device_id: 'e2', profile_id: 'e2' }))
  rows.push(event(DateTime.fromISO('2026-03-07T23:59:59.999', { zone: TZ }), { name: 'edge', device_id: 'e2', profile_id: 'e2' }))
  // Older than 30 days (in the default window: all time), and in the future (outside it).
  for (let i = 0; i < 5; i++) rows.push(event(NOW.minus({ days: 40, hours: i }), { name: 'old', device_id: 'd3', profile_id: 'd3' }))
  rows.push(event(THIRTY_DAYS.minus({ milliseconds: 1 }), { name: 'old', device_id: 'd3', profile_id: 'd3' }))
  rows.push(event(THIRTY_DAYS, { name: 'oldest-in', device_id: 'd3', profile_id: 'd3' }))
  rows.push(event(NOW, { name: 'future', device_id: 'd3', profile_id: 'd3' }))
  rows.push(event(NOW.plus({ hours: 1 }), { name: 'future' }))
  // Another project's events never appear, even for the same devices and profiles.
  for (let i = 0; i < 25; i++) rows.push(event(NOW.minus({ hours: i }), { project_id: OTHER, device_id: 'd3', profile_id: 'u1', name: 'click' }))

  const profile = (id: string, fields: Partial<ProfileRow>): ProfileRow => ({
    id,
    project_id: PROJECT,
    is_external: true,
    first_name: `First ${id}`,
    last_name: `Last ${id}`,
    email: `${id}@example.com`,
    avatar: '',
    properties: { tier: `t-${id}` },
    created_at: '2026-01-01 00:00:00.000',
    last_seen_at: '2026-03-01 00:00:00.000',
    ...fields,
  })
  // u0–u5 have rows (u0 twice: FINAL keeps the newer); u6–u9 were identified without one.
  profiles.push(profile('u0', { email: 'old@example.com', last_seen_at: '2026-02-01 00:00:00.000' }))
  for (let i = 0; i < 6; i++) profiles.push(profile(`u${i}`, {}))
  profiles.push(profile('u2', { project_id: OTHER, email: 'other-project@example.com', last_seen_at: '2026-03-09 00:00:00.000' }))
  metas.push({ project_id: PROJECT, name: 'click', conversion: false, color: 'blue', icon: 'mouse', created_at: '2026-01-02 03:04:05.678' })
  metas.push({ project_id: PROJECT, name: 'purchase', conversion: true, color: 'green', icon: 'cart', created_at: '2026-01-02 03:04:05.000' })
  metas.push({ project_id: OTHER, name: 'signup', conversion: true, color: 'red', icon: 'x', created_at: '2026-01-02 03:04:05.000' })
}
generate()

// ---------------------------------------------------------------------------------------------
// The reference: event objects and selections, from the rows.

const DEFAULT_KEYS = ['id', 'name', 'deviceId', 'profileId', 'projectId', 'sessionId', 'createdAt', 'path', 'origin', 'country', 'city', 'os', 'browser', 'duration', 'groups']
const ALL_KEYS = [
  ...DEFAULT_KEYS,
  'properties',
  'region',
  'latitude',
  'longitude',
  'device',
  'brand',
  'model',
  'osVersion',
  'browserVersion',
  'referrer',
  'referrerName',
  'referrerType',
  'importedAt',
  'sdkName',
  'sdkVersion',
  'revenue',
  'profile',
  'meta',
]

function latestProfile(id: string): ProfileRow | undefined {
  const own = profiles.filter((p) => p.project_id === PROJECT && p.id === id)
  return own.sort((a, b) => (a.last_seen_at < b.last_seen_at ? 1 : -1))[0]
}

function fullObject(r: EventRow): Record<string, unknown> {
  const p = latestProfile(r.profile_id)
  const m = metas.find((x) => x.project_id === PROJECT && x.name === r.name)
  return {
    id: r.id,
    name: r.name,
    deviceId: r.device_id,
    profileId: r.profile_id,
    projectId: r.project_id,
    sessionId: r.session_id,
    createdAt: isoOf(r.created_at),
    path: r.path,
    origin: r.origin,
    country: r.country,
    city: r.city,
    os: r.os,
    browser: r.browser,
    duration: r.duration,
    // No row of this file carries groups.
    groups: [],
    properties: r.properties,
    region: r.region,
    latitude: r.latitude,
    longitude: r.longitude,
    device: r.device,
    brand: r.brand,
    model: r.model,
    osVersion: r.os_version,
    browserVersion: r.browser_version,
    referrer: r.referrer,
    referrerName: r.referrer_name,
    referrerType: r.referrer_type,
    importedAt: r.imported_at === null ? null : `${r.imported_at.replace(' ', 'T')}.000Z`,
    sdkName: r.sdk_name,
    sdkVersion: r.sdk_version,
    revenue: r.revenue,
    // Dotted property keys nest (none here); a profile without a row has the same keys, empty,
    // first and last seen at the event.
    profile: {
      id: r.profile_id,
      email: p?.email ?? '',
      avatar: p?.avatar ?? '',
      firstName: p?.first_name ?? '',
      lastName: p?.last_name ?? '',
      createdAt: isoOf(p?.created_at ?? r.created_at),
      lastSeenAt: isoOf(p?.last_seen_at ?? r.created_at),
      isExternal: p ? p.is_external : r.profile_id !== r.device_id,
      projectId: r.project_id,
      // This file's profiles carry no groups.
      groups: [],
      properties: p?.properties ?? {},
    },
    meta: m
      ? {
          id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
          name: m.name,
          conversion: m.conversion,
          color: m.color,
          icon: m.icon,
          projectId: m.project_id,
          createdAt: isoOf(m.created_at),
          updatedAt: isoOf(m.created_at),
        }
      : null,
  }
}

const pickKeys = (o: Record<string, unknown>, keys: readonly string[]) => Object.fromEntries(keys.map((k) => [k, o[k]]))

interface Selection {
  from?: DateTime
  to?: DateTime
  events?: string[]
  profileId?: string
  where?: (r: EventRow) => boolean
}

function select(s: Selection = {}): EventRow[] {
  const from = s.from ?? DEFAULT_FROM
  const to = s.to ?? NOW
  let devices: Set<string> | undefined
  if (s.profileId !== undefined) {
    devices = new Set(rows.filter((r) => r.project_id === PROJECT && r.profile_id === s.profileId).map((r) => r.device_id))
  }
  return rows
    .filter((r) => {
      const t = instantOf(r)
      if (r.project_id !== PROJECT || t < from || t >= to) return false
      if (s.events && !s.events.includes(r.name)) return false
      if (s.profileId !== undefined && r.profile_id !== s.profileId && !(r.profile_id === r.device_id && devices!.has(r.device_id))) return false
      return s.where ? s.where(r) : true
    })
    .sort(exportOrder)
}

// ---------------------------------------------------------------------------------------------

let rt: TestRuntime
let headers: Record<string, string>
let app: ReturnType<typeof testApp>

interface Page {
  meta: { count: number; totalCount: number; pages: number; current: number; nextCursor: string | null }
  data: Record<string, unknown>[]
}

async function get(path: string) {
  const res = await app.request(path, { headers })
  return res
}

async function page(path: string): Promise<Page> {
  const res = await get(path)
  const body = await res.json()
  expect(res.status, JSON.stringify(body)).toBe(200)
  return body as Page
}

async function error(path: string, status = 400) {
  const res = await get(path)
  const body = (await res.json()) as { code: string; details?: { path: string; message: string }[] }
  expect(res.status, JSON.stringify(body)).toBe(status)
  return body
}

/** Follows nextCursor from `first` to the end. */
async function walk(first: string, between?: () => Promise<void>) {
  const pages: Page[] = []
  let url: string | null = first
  while (url) {
    const p = await page(url)
    pages.push(p)
    url = p.meta.nextCursor ? `/export/events?${new URLSearchParams([...new URL(first, 'http://x').searchParams, ['cursor', p.meta.nextCursor]])}` : null
    if (between) await between()
  }
  return pages
}


beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000' })
  await createProject(rt.runner, { id: PROJECT, name: 'Export', timezone: TZ, organizationId: ORG })
  await createProject(rt.runner, { id: OTHER, name: 'Other', timezone: 'UTC', organizationId: ORG })
  const client = await createClientRow(rt.runner, { type: 'read', projectId: PROJECT, organizationId: ORG, name: 'export-reader' })
  headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
  // Several inserts: several parts, so the read in key order has to merge them.
  for (let i = 0; i < 4; i++) {
    await rt.engine.client.insert({ table: 'events', values: rows.filter((_, j) => j % 4 === i), format: 'JSONEachRow' })
  }
  await rt.engine.client.insert({ table: 'profiles', values: profiles, format: 'JSONEachRow' })
  await rt.engine.client.insert({ table: 'event_meta', values: metas, format: 'JSONEachRow' })
  app = testApp(rt, { now: () => NOW.toJSDate() })
})

afterAll(async () => {
  await rt?.dispose()
})

describe('GET /export/events as JSON pages', () => {
  it('returns all time (as OpenPanel) newest first with the default fields, 50 per page', async () => {
    const expected = select()
    expect(expected.length).toBeGreaterThan(400)
    const p = await page('/export/events')
    expect(p.meta).toEqual({
      count: 50,
      totalCount: expected.length,
      pages: Math.ceil(expected.length / 50),
      current: 1,
      nextCursor: expect.any(String),
    })
    expect(p.data).toEqual(expected.slice(0, 50).map((r) => pickKeys(fullObject(r), DEFAULT_KEYS)))
    expect(Object.keys(p.data[0]!)).toEqual(DEFAULT_KEYS)
    // The window is [the epoch, now): events older than 30 days are in, now is not.
    const all = await walk('/export/events?limit=1000')
    const names = new Set(all.flatMap((x) => x.data.map((d) => d.name)))
    expect(names.has('oldest-in') && names.has('old')).toBe(true)
    expect(names.has('future')).toBe(false)
  })

  it('pages with page and limit as OpenPanel does, and reports the page in meta', async () => {
    const expected = select().map((r) => r.id)
    const limit = 37
    const pages = Math.ceil(expected.length / limit)
    const seen: string[] = []
    for (let n = 1; n <= pages; n++) {
      const p = await page(`/export/events?limit=${limit}&page=${n}`)
      expect(p.meta.current).toBe(n)
      expect(p.meta.pages).toBe(pages)
      expect(p.meta.totalCount).toBe(expected.length)
      expect(p.meta.count).toBe(n < pages ? limit : expected.length - (pages - 1) * limit)
      expect(p.meta.nextCursor === null).toBe(n === pages)
      seen.push(...p.data.map((d) => d.id as string))
    }
    expect(seen).toEqual(expected)
    const beyond = await page(`/export/events?limit=${limit}&page=${pages + 1}`)
    expect(beyond.meta).toMatchObject({ count: 0, current: pages + 1, nextCursor: null })
    expect(beyond.data).toEqual([])
    // A page's nextCursor continues right after it.
    const third = await page(`/export/events?limit=${limit}&page=3`)
    const fourth = await page(`/export/events?limit=${limit}&cursor=${encodeURIComponent(third.meta.nextCursor!)}`)
    expect(fourth.meta.current).toBe(4)
    expect(fourth.data.map((d) => d.id)).toEqual(expected.slice(3 * limit, 4 * limit))
  })

  it('validates limit and page; out of range they are clamped as OpenPanel does, and X-Quarry-Clamped says so', async () => {
    for (const q of ['limit=abc', 'page=1.5', 'page=x']) {
      const body = await error(`/export/events?${q}`)
      expect(body.code).toBe('invalid_parameters')
    }
    for (const [q, clamped, count] of [['limit=0', 'limit=1', 1], ['limit=1001', 'limit=1000', Math.min(1000, select().length)], ['page=0', 'page=1', 50], ['page=-1&limit=-5', 'limit=1, page=1', 1]] as const) {
      const res = await get(`/export/events?${q}`)
      expect(res.status, q).toBe(200)
      expect(res.headers.get('x-quarry-clamped'), q).toBe(clamped)
      const body = (await res.json()) as { meta: { count: number; current: number } }
      expect([body.meta.count, body.meta.current], q).toEqual([count, 1])
    }
    expect((await page('/export/events?limit=1000')).meta.count).toBe(Math.min(1000, select().length))
    expect((await page('/export/events?limit=1')).meta.count).toBe(1)
  })

  it('walks every cursor to the end: each event exactly once, in order, totalCount the walk length', async () => {
    const expected = select().map((r) => r.id)
    const pages = await walk('/export/events?limit=23')
    const ids = pages.flatMap((p) => p.data.map((d) => d.id as string))
    expect(ids).toEqual(expected)
    for (const [i, p] of pages.entries()) {
      expect(p.meta.totalCount).toBe(ids.length)
      expect(p.meta.current).toBe(i + 1)
      expect(p.meta.pages).toBe(pages.length)
    }
    expect(pages.at(-1)!.meta.nextCursor).toBeNull()
  })

  it('pins the window in the cursor: later pages read the first page’s window, not a new now', async () => {
    const first = await page('/export/events?limit=100')
    const moved = testApp(rt, { now: () => NOW.plus({ days: 5 }).toJSDate() })
    const res = await moved.request(`/export/events?limit=100&cursor=${encodeURIComponent(first.meta.nextCursor!)}`, { headers })
    const second = (await res.json()) as Page
    expect(second.meta.totalCount).toBe(first.meta.totalCount)
    expect(second.data.map((d) => d.id)).toEqual(select().slice(100, 200).map((r) => r.id))
    // All time (from the epoch, in the project's zone) up to the first page's now.
    expect(res.headers.get('X-Quarry-Range')).toBe('1969-12-31T19:00:00-05:00/2026-03-10T08:00:00-04:00')
  })

  it('refuses tampered cursors, cursors of other parameters, and page with cursor', async () => {
    const first = await page('/export/events?limit=10&event=click')
    const cursor = first.meta.nextCursor!
    const [body, mac] = cursor.split('.')
    const payload = JSON.parse(Buffer.from(body!, 'base64url').toString()) as Record<string, unknown>
    const forged = `${Buffer.from(JSON.stringify({ ...payload, t: '2030-01-01T00:00:00.000Z' })).toString('base64url')}.${mac}`
    for (const bad of [forged, `${cursor}x`, 'garbage', '2']) {
      expect((await error(`/export/events?limit=10&event=click&cursor=${encodeURIComponent(bad)}`)).code).toBe('invalid_cursor')
    }
    for (const other of ['event=purchase', 'event=click&profileId=u1', 'event=click&start=2026-03-01', 'event=click&includes=geo', 'projectId=exp-other&event=click']) {
      const res = await get(`/export/events?limit=10&${other}&cursor=${encodeURIComponent(cursor)}`)
      // The other project is refused before the cursor is looked at.
      expect([400, 403]).toContain(res.status)
      if (res.status === 400) expect(((await res.json()) as { code: string }).code).toBe('invalid_cursor')
    }
    expect((await error(`/export/events?limit=10&event=click&page=2&cursor=${encodeURIComponent(cursor)}`)).code).toBe('invalid_parameters')
    // The page size may change along the walk; the event list is the same set in another spelling.
    const next = await page(`/export/events?limit=5&event=${encodeURIComponent('["click"]')}&cursor=${encodeURIComponent(cursor)}`)
    expect(next.data.map((d) => d.id)).toEqual(select({ events: ['click'] }).slice(10, 15).map((r) => r.id))
  })

  it('accepts projectId and project_id, refuses unknown parameters', async () => {
    expect((await page(`/export/events?projectId=${PROJECT}&limit=1`)).meta.totalCount).toBe(select().length)
    expect((await page(`/export/events?project_id=${PROJECT}&limit=1`)).meta.totalCount).toBe(select().length)
    const body = await error('/export/events?bogus=1&range=7d')
    expect(body.details?.map((d) => d.path).sort()).toEqual(['bogus', 'range'])
  })
})

describe('includes', () => {
  it('adds every group: profile, meta, properties, geo, device, referrer', async () => {
    const expected = select()
    const pages = await walk('/export/events?limit=1000&includes=profile,meta,properties,geo,device,referrer')
    const groupKeys = ALL_KEYS.filter((k) => !['importedAt', 'sdkName', 'sdkVersion', 'revenue'].includes(k))
    const data = pages.flatMap((p) => p.data)
    expect(data).toEqual(expected.map((r) => pickKeys(fullObject(r), groupKeys)))
    expect(Object.keys(data[0]!)).toEqual(groupKeys)
    // Every kind of profile shows up: a stored one, an anonymous visitor, an identified one without a row.
    const kinds = new Set(data.map((d) => `${(d.profile as { firstName: string }).firstName !== ''}/${(d.profile as { isExternal: boolean }).isExternal}`))
    expect(kinds).toEqual(new Set(['true/true', 'false/false', 'false/true']))
    expect(data.some((d) => d.meta === null) && data.some((d) => d.meta !== null)).toBe(true)
  })

  for (const [group, keys] of Object.entries({
    profile: ['profile'],
    meta: ['meta'],
    properties: ['properties'],
    geo: ['region', 'latitude', 'longitude'],
    device: ['device', 'brand', 'model', 'osVersion', 'browserVersion'],
    referrer: ['referrer', 'referrerName', 'referrerType'],
  })) {
    it(`includes=${group} adds ${keys.join(', ')}`, async () => {
      const p = await page(`/export/events?limit=200&includes=${group}`)
      expect(p.data).toEqual(select().slice(0, 200).map((r) => pickKeys(fullObject(r), [...DEFAULT_KEYS, ...keys])))
    })
  }

  it("takes OpenPanel's field names, comma-separated and repeated", async () => {
    const fields = ['importedAt', 'sdkName', 'sdkVersion', 'revenue', 'osVersion', 'browserVersion', 'latitude', 'referrerName', 'origin']
    const p = await page(`/export/events?limit=1000&includes=${fields.slice(0, 3).join(',')}&includes=${fields.slice(3).join(',')}`)
    const keys = ALL_KEYS.filter((k) => DEFAULT_KEYS.includes(k) || fields.includes(k))
    expect(p.data).toEqual(select().map((r) => pickKeys(fullObject(r), keys)))
    expect(p.data.some((d) => d.importedAt !== null)).toBe(true)
  })

  it('refuses an unknown include', async () => {
    for (const q of ['includes=group', 'includes=geo,nope', 'includes=geo&includes=Profile']) {
      const body = await error(`/export/events?${q}`)
      expect(body.code).toBe('invalid_parameters')
      expect(body.details?.[0]?.path).toBe('includes')
    }
  })
})

describe('selection', () => {
  it('event: one name, the key repeated, or a JSON array', async () => {
    const one = await walk('/export/events?limit=1000&event=click')
    expect(one.flatMap((p) => p.data.map((d) => d.id))).toEqual(select({ events: ['click'] }).map((r) => r.id))
    const expected = select({ events: ['click', 'purchase'] }).map((r) => r.id)
    for (const q of ['event=click&event=purchase', `event=${encodeURIComponent('["purchase","click"]')}`]) {
      const p = await page(`/export/events?limit=1000&${q}`)
      expect(p.data.map((d) => d.id)).toEqual(expected)
      expect(p.meta.totalCount).toBe(expected.length)
    }
  })

  it("profileId: the profile's events and its devices' anonymous ones; count alike", async () => {
    for (const profileId of ['u1', 'u7', 'd12', 'nobody']) {
      const expected = select({ profileId })
      const p = await page(`/export/events?limit=1000&profileId=${profileId}`)
      expect(p.data.map((d) => d.id)).toEqual(expected.map((r) => r.id))
      expect(p.meta.totalCount).toBe(expected.length)
      if (profileId === 'u1') {
        expect(expected.some((r) => r.profile_id === 'u1') && expected.some((r) => r.profile_id !== 'u1')).toBe(true)
      }
    }
  })

  it('start/end: dates are whole project-local days; date-times keep their time of day, end inclusive', async () => {
    const local = (iso: string) => DateTime.fromISO(iso, { zone: TZ })
    const cases: [string, DateTime, DateTime][] = [
      ['start=2026-03-05&end=2026-03-06', local('2026-03-05T00:00'), local('2026-03-07T00:00')],
      // The DST day: 23 hours.
      ['start=2026-03-08&end=2026-03-08', local('2026-03-08T00:00'), local('2026-03-09T00:00')],
      ['start=2026-03-05T10:30:00Z&end=2026-03-06T08:15:30.500Z', DateTime.fromISO('2026-03-05T10:30:00Z'), DateTime.fromISO('2026-03-06T08:15:30.501Z')],
      ['start=2026-03-05T11:30:00%2B01:00&end=2026-03-06T03:15:30.5-05:00', DateTime.fromISO('2026-03-05T10:30:00Z'), DateTime.fromISO('2026-03-06T08:15:30.501Z')],
      // Without an offset: project-local wall-clock time (EST before the change, EDT after).
      ['start=2026-03-05T05:30:00&end=2026-03-09T01:00:00', DateTime.fromISO('2026-03-05T10:30:00Z'), DateTime.fromISO('2026-03-09T05:00:00.001Z')],
      ['start=2026-03-05 05:30:00&end=2026-03-06', DateTime.fromISO('2026-03-05T10:30:00Z'), local('2026-03-07T00:00')],
      // Only one end given: all time up to the end, or up to now.
      ['end=2026-03-03', DEFAULT_FROM, local('2026-03-04T00:00')],
      ['start=2026-03-09T12:00:00Z', DateTime.fromISO('2026-03-09T12:00:00Z'), NOW],
    ]
    for (const [q, from, to] of cases) {
      const expected = select({ from, to })
      const pages = await walk(`/export/events?limit=1000&${q.replace(/ /g, '%20')}`)
      expect(pages.flatMap((p) => p.data.map((d) => d.id)), q).toEqual(expected.map((r) => r.id))
      expect(pages[0]!.meta.totalCount, q).toBe(expected.length)
    }
    expect(select({ from: local('2026-03-08T00:00'), to: local('2026-03-09T00:00') }).filter((r) => r.name === 'edge')).toHaveLength(2)
    for (const q of ['start=yesterday', 'end=2026-13-01', 'start=2026-03-06&end=2026-03-05', 'start=2026-03-05T10:00Z&end=2026-03-05T09:00Z']) {
      expect((await error(`/export/events?${q}`)).code).toBe('invalid_parameters')
    }
  })

  it('filters: the insights filter model, properties.* included, JSON or bracket notation', async () => {
    const filters = [
      { name: 'properties.plan', operator: 'is', value: ['pro', 'team'] },
      { name: 'os', operator: 'isNot', value: ['iOS'] },
      { name: 'utm_source', operator: 'contains', value: ['news/'] },
    ]
    const expected = select({
      where: (r) => ['pro', 'team'].includes(r.properties.plan!) && r.os !== 'iOS' && (r.properties['__query.utm_source'] ?? '').includes('news/'),
    })
    expect(expected.length).toBeGreaterThan(5)
    const json = await page(`/export/events?limit=1000&filters=${encodeURIComponent(JSON.stringify(filters))}`)
    expect(json.data.map((d) => d.id)).toEqual(expected.map((r) => r.id))
    expect(json.meta.totalCount).toBe(expected.length)
    const bracket = filters
      .flatMap((f, i) => [`filters[${i}][name]=${f.name}`, `filters[${i}][operator]=${f.operator}`, ...f.value.map((v) => `filters[${i}][value]=${encodeURIComponent(v)}`)])
      .join('&')
    expect((await page(`/export/events?limit=1000&${bracket}`)).data.map((d) => d.id)).toEqual(expected.map((r) => r.id))
    // Numeric and camelCase names; a property that is missing reads as ''.
    const numeric = [
      { name: 'duration', operator: 'gte', value: [5000] },
      { name: 'referrerName', operator: 'is', value: ['Google'] },
      { name: 'properties.quote"d', operator: 'isNull', value: [] },
    ]
    const p = await page(`/export/events?limit=1000&filters=${encodeURIComponent(JSON.stringify(numeric))}`)
    expect(p.data.map((d) => d.id)).toEqual(
      select({ where: (r) => r.duration >= 5000 && r.referrer_name === 'Google' && (r.properties['quote"d'] ?? '') === '' }).map((r) => r.id),
    )
    expect((await error(`/export/events?filters=${encodeURIComponent('[{"name":"nope","operator":"is","value":["x"]}]')}`)).code).toBe(
      'invalid_parameters',
    )
  })
})

describe('streaming formats', () => {
  it('ndjson: every matching event, as the JSON data objects, in order', async () => {
    const res = await get('/export/events?format=ndjson&includes=profile,meta,properties,geo,device,referrer,importedAt,sdkName,sdkVersion,revenue')
    expect(res.status).toBe(200)
    expect(res.headers.get('Content-Type')).toBe('application/x-ndjson; charset=utf-8')
    expect(res.headers.get('Content-Disposition')).toBe('attachment; filename="events-exp-19700101T000000Z-20260310T120000Z.ndjson"')
    const text = await res.text()
    expect(text.endsWith('\n')).toBe(true)
    const lines = text.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
    // No page, no row cap: more than the largest page.
    expect(lines).toEqual(select().map(fullObject))
    expect(lines.every((l) => JSON.stringify(Object.keys(l)) === JSON.stringify(ALL_KEYS))).toBe(true)
  })

  it('ndjson rows are the JSON page objects, field for field', async () => {
    const q = 'includes=profile,meta,geo&event=click&event=purchase&profileId=u3&start=2026-03-01'
    const json = await page(`/export/events?limit=1000&${q}`)
    const res = await get(`/export/events?format=ndjson&${q}`)
    const lines = (await res.text()).trimEnd().split('\n').map((l) => JSON.parse(l) as unknown)
    expect(lines).toEqual(json.data)
    expect(lines.length).toBeGreaterThan(0)
  })

  it('csv: a header row, then every event; nested values as JSON text, null as an empty cell', async () => {
    const res = await get('/export/events?format=csv&includes=profile,meta,properties,geo,device,referrer,importedAt,sdkName,sdkVersion,revenue')
    expect(res.status).toBe(200)
    expect(res.headers.get('Content-Type')).toBe('text/csv; charset=utf-8')
    expect(res.headers.get('Content-Disposition')).toMatch(/^attachment; filename="events-exp-.*\.csv"$/)
    const table = parseCsv(await res.text())
    expect(table[0]).toEqual(ALL_KEYS)
    const expected = select().map(fullObject)
    expect(table.length - 1).toBe(expected.length)
    const NESTED = new Set(['properties', 'profile', 'meta', 'groups'])
    for (const [i, cells] of table.slice(1).entries()) {
      const want = expected[i]!
      const got = Object.fromEntries(
        ALL_KEYS.map((k, j) => {
          const cell = cells[j]!
          if (NESTED.has(k)) return [k, cell === '' ? null : JSON.parse(cell)]
          const v = want[k]
          if (v === null) return [k, cell === '' ? null : cell]
          return [k, typeof v === 'number' ? Number(cell) : cell]
        }),
      )
      expect(got).toEqual(want)
    }
  })

  it('csv with filters and the default fields; an empty result is the header alone', async () => {
    const res = await get('/export/events?format=csv&event=purchase&start=2026-03-05')
    const table = parseCsv(await res.text())
    expect(table[0]).toEqual(DEFAULT_KEYS)
    expect(table.slice(1).map((r) => r[0])).toEqual(select({ events: ['purchase'], from: DateTime.fromISO('2026-03-05', { zone: TZ }) }).map((r) => r.id))
    const empty = await get('/export/events?format=csv&event=nothing')
    expect(empty.status).toBe(200)
    expect(await empty.text()).toBe(`${DEFAULT_KEYS.map((k) => `"${k}"`).join(',')}\n`)
    const none = await get('/export/events?format=ndjson&event=nothing')
    expect(await none.text()).toBe('')
  })

  it('gzip when the client accepts it, byte for byte the same export; never the middleware’s deflate', async () => {
    const q = '/export/events?format=csv&includes=properties,profile'
    const plain = Buffer.from(await (await get(q)).arrayBuffer())
    for (const accept of ['gzip', 'gzip, deflate, br', 'deflate;q=1, gzip;q=0.5', 'x-gzip, zstd;q=0.1']) {
      const res = await app.request(q, { headers: { ...headers, 'accept-encoding': accept } })
      expect(res.status).toBe(200)
      expect(res.headers.get('Content-Encoding'), accept).toBe('gzip')
      expect(res.headers.get('Vary')).toMatch(/Accept-Encoding/)
      expect(gunzipSync(Buffer.from(await res.arrayBuffer())).equals(plain)).toBe(true)
    }
    for (const accept of ['identity', 'deflate', 'gzip;q=0', 'br, *;q=0', 'gzip;q=0, zstd;q=0, *']) {
      const res = await app.request(q, { headers: { ...headers, 'accept-encoding': accept } })
      expect(res.headers.get('Content-Encoding'), accept).toBeNull()
      expect(Buffer.from(await res.arrayBuffer()).equals(plain)).toBe(true)
    }
    const ndjson = await app.request('/export/events?format=ndjson', { headers: { ...headers, 'accept-encoding': 'gzip' } })
    const lines = gunzipSync(Buffer.from(await ndjson.arrayBuffer())).toString().trimEnd().split('\n')
    expect(lines.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(select().map((r) => r.id))
  })

  it('explain=sql on a gzip-accepting stream answers JSON whose encoding header tells the truth', async () => {
    const root = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: ORG, name: 'export-root' })
    const res = await app.request(`/export/events?projectId=${PROJECT}&format=csv&explain=sql`, {
      headers: { 'openpanel-client-id': root.id, 'openpanel-client-secret': root.secret, 'accept-encoding': 'gzip' },
    })
    expect(res.status).toBe(200)
    const raw = Buffer.from(await res.arrayBuffer())
    const text = res.headers.get('Content-Encoding') === 'gzip' ? gunzipSync(raw).toString() : raw.toString()
    const body = JSON.parse(text) as { sql: string[]; params: Record<string, unknown> }
    expect(body.sql.some((sql) => sql.includes('FORMAT'))).toBe(true)
    expect(Object.values(body.params)).toContain(PROJECT)
  })

  it('refuses limit, page and cursor with a streaming format', async () => {
    for (const q of ['limit=10', 'page=2', 'cursor=abc']) {
      const body = await error(`/export/events?format=csv&${q}`)
      expect(body.details?.[0]?.path).toBe(q.split('=')[0])
    }
    expect((await error('/export/events?format=xml')).code).toBe('invalid_parameters')
  })
})

describe('cursor walks while events arrive', () => {
  it('returns every event exactly once; events after the pinned end never show; totalCount stays the walk length', async () => {
    const expected = select().map((r) => r.id)
    let inserted = 0
    let stop = false
    // Another task keeps inserting newer events (created_at after the pinned end) during the walk.
    const writer = (async () => {
      while (!stop) {
        const batch = Array.from({ length: 20 }, (_, i) => event(NOW.plus({ milliseconds: inserted * 20 + i }), { name: 'late', device_id: 'late', profile_id: 'late' }))
        await rt.engine.client.insert({ table: 'events', values: batch, format: 'JSONEachRow' })
        inserted++
        await new Promise((r) => setTimeout(r, 5))
      }
    })()
    const pages = await walk('/export/events?limit=17', async () => {
      // Make sure inserts really interleave with the pages.
      const before = inserted
      while (inserted === before) await new Promise((r) => setTimeout(r, 2))
    })
    stop = true
    await writer
    expect(inserted).toBeGreaterThanOrEqual(pages.length)
    const ids = pages.flatMap((p) => p.data.map((d) => d.id as string))
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids).toEqual(expected)
    for (const p of pages) expect(p.meta.totalCount).toBe(ids.length)
    // A fresh first page (new now) does see them.
    const later = testApp(rt, { now: () => NOW.plus({ hours: 2 }).toJSDate() })
    const res = await later.request('/export/events?limit=1&event=late', { headers })
    expect(((await res.json()) as Page).meta.totalCount).toBe(inserted * 20)
  })

  it('events inserted inside the window during a walk: never twice, the original ones all there', async () => {
    const before = select({ events: ['screen_view', 'click', 'in-window'] })
    const oldest = instantOf(before.at(-1)!)
    const newest = instantOf(before[0]!)
    const added: EventRow[] = []
    let round = 0
    const pages = await walk('/export/events?limit=19&event=screen_view&event=click&event=in-window', async () => {
      // One event older than everything (after the cursor: it will be read) and one in the middle
      // of what was already read (before the cursor: it is missed, as documented).
      round++
      const batch = [
        event(oldest.minus({ seconds: round }), { name: 'in-window' }),
        event(newest.minus({ seconds: 1, milliseconds: round }), { name: 'in-window' }),
      ]
      added.push(...batch)
      await rt.engine.client.insert({ table: 'events', values: batch, format: 'JSONEachRow' })
    })
    const ids = pages.flatMap((p) => p.data.map((d) => d.id as string))
    expect(new Set(ids).size).toBe(ids.length)
    const original = new Set(before.map((r) => r.id))
    const addedIds = new Set(added.map((r) => r.id))
    expect(ids.filter((id) => original.has(id))).toEqual(before.map((r) => r.id))
    expect(ids.every((id) => original.has(id) || addedIds.has(id))).toBe(true)
    // The older ones inserted before the walk reached their place were read.
    expect(ids.some((id) => addedIds.has(id))).toBe(true)
  })
})

describe('counts over many granules', () => {
  it('X-Quarry-Rows and totalCount count the events of the window, whatever the engine answers a bare count() from', async () => {
    // 200,000 events ten seconds apart under three names: the events_by_name projection then holds
    // granules that span names, from which ClickHouse 26.7's exact-count shortcut counted one twice.
    const project = 'many-granules'
    const names = ['a', 'b', 'c']
    const n = 200_000
    const base = DateTime.fromISO('2026-03-01T00:00:00Z', { zone: 'UTC' })
    await createProject(rt.runner, { id: project, name: 'Many granules', timezone: 'UTC', organizationId: ORG })
    const reader = await createClientRow(rt.runner, { type: 'read', projectId: project, organizationId: ORG, name: 'many-granules' })
    await rt.runner.command({
      name: 'many_granules',
      sql: `INSERT INTO events (name, device_id, profile_id, project_id, session_id, created_at)
            SELECT {names:Array(String)}[1 + number % 3], 'd', 'd', {project:String}, 's', {base:DateTime64(3, 'UTC')} + toIntervalSecond(number * 10)
            FROM numbers({n:UInt64})`,
      params: { names, project, base: base.toFormat('yyyy-LL-dd HH:mm:ss.SSS'), n },
    })
    const start = base.plus({ days: 6 })
    const end = base.plus({ days: 30 })
    const expected = Array.from({ length: n }, (_, i) => base.plus({ seconds: i * 10 })).filter((t) => t >= start && t < end).length
    const auth = { 'openpanel-client-id': reader.id, 'openpanel-client-secret': reader.secret }
    const query = `start=${start.toISO()}&end=${end.toISO()}`
    const head = await app.request(`/export/events?format=csv&${query}`, { method: 'HEAD', headers: auth })
    expect(head.headers.get('x-quarry-rows')).toBe(String(expected))
    const page = (await (await app.request(`/export/events?limit=1&${query}`, { headers: auth })).json()) as { meta: { totalCount: number } }
    expect(page.meta.totalCount).toBe(expected)
  })
})
