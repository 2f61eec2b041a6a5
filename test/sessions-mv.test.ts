import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadMigrations } from '../src/clickhouse/migrate.ts'
import { openTestRuntime, type TestRuntime } from './helpers/runtime.ts'
import type { EventRow as StoredEvent } from './helpers/event-row.ts'

// Hand-built events whose sessions arrive in several insert blocks, out of order, to check the
// sessions view against values computed here from the same events.

type Event = Pick<
  StoredEvent,
  'name' | 'session_id' | 'device_id' | 'profile_id' | 'created_at' | 'origin' | 'path'
  | 'referrer' | 'referrer_name' | 'referrer_type' | 'revenue' | 'properties' | 'country'
  | 'region' | 'city' | 'device' | 'brand' | 'model' | 'browser' | 'browser_version' | 'os'
  | 'os_version'
>

const base: Omit<Event, 'name' | 'session_id' | 'created_at' | 'path'> = {
  device_id: 'dev-1',
  profile_id: 'dev-1',
  origin: 'https://a.example',
  referrer: '',
  referrer_name: '',
  referrer_type: '',
  revenue: 0,
  properties: {},
  country: 'SE',
  region: 'Stockholm County',
  city: 'Stockholm',
  device: 'desktop',
  brand: 'Apple',
  model: 'Macintosh',
  browser: 'Safari',
  browser_version: '17.4',
  os: 'Mac OS',
  os_version: '14.4',
}

const at = (minute: number, second = 0) => `2026-01-05 10:${String(minute).padStart(2, '0')}:${String(second).padStart(2, '0')}.000`

// Session "long": the first event carries the campaign and geography; later events differ, a
// non-revenue event carries a revenue value that must not count.
const long: Event[] = [
  {
    ...base,
    name: 'screen_view',
    session_id: 'long',
    created_at: at(0),
    path: '/',
    referrer: 'https://www.google.com/',
    referrer_name: 'Google',
    referrer_type: 'search',
    properties: { '__query.utm_source': 'google', '__query.utm_medium': 'cpc', '__query.utm_campaign': 'spring' },
  },
  { ...base, name: 'signup', session_id: 'long', created_at: at(1), path: '/', profile_id: 'user-1' },
  { ...base, name: 'screen_view', session_id: 'long', created_at: at(2), path: '/pricing', profile_id: 'user-1', country: 'NO', city: 'Oslo', region: 'Oslo' },
  { ...base, name: 'revenue', session_id: 'long', created_at: at(3), path: '/pricing', profile_id: 'user-1', revenue: 1250 },
  { ...base, name: 'add_to_cart', session_id: 'long', created_at: at(4), path: '/pricing', profile_id: 'user-1', revenue: 999 },
  { ...base, name: 'revenue', session_id: 'long', created_at: at(5), path: '/pricing', profile_id: 'user-1', revenue: 300 },
  { ...base, name: 'screen_view', session_id: 'long', created_at: at(6, 30), path: '/thanks', origin: 'https://b.example', profile_id: 'user-1' },
]

// Session "custom-first": a custom event before the only page view, so its first-event attributes
// come from the custom event while its entry page comes from the page view; one page view = bounce.
const customFirst: Event[] = [
  {
    ...base,
    name: 'search',
    session_id: 'custom-first',
    device_id: 'dev-2',
    profile_id: 'dev-2',
    created_at: at(10),
    path: '/search',
    referrer: 'https://www.bing.com/',
    referrer_name: 'Bing',
    referrer_type: 'search',
    city: 'Gothenburg',
    region: 'Västra Götaland County',
  },
  { ...base, name: 'screen_view', session_id: 'custom-first', device_id: 'dev-2', profile_id: 'dev-2', created_at: at(11), path: '/results' },
]

const single: Event[] = [{ ...base, name: 'screen_view', session_id: 'single', device_id: 'dev-3', profile_id: 'dev-3', created_at: at(20), path: '/docs' }]

// Insert blocks: later events of "long" first, its first event last, "custom-first" split in two.
const blocks: Event[][] = [
  [long[4]!, long[6]!, customFirst[1]!],
  [long[2]!, single[0]!],
  [long[5]!, customFirst[0]!],
  [long[1]!, long[3]!],
  [long[0]!],
]

/** The session row as DESIGN.md defines it, computed from its events. */
function expectedSession(events: Event[]) {
  const byTime = [...events].sort((a, b) => a.created_at.localeCompare(b.created_at))
  const views = byTime.filter((e) => e.name === 'screen_view')
  const first = byTime[0]!
  const last = byTime[byTime.length - 1]!
  const ms = (s: string) => Date.parse(`${s.replace(' ', 'T')}Z`)
  return {
    id: first.session_id,
    created_at: first.created_at,
    ended_at: last.created_at,
    duration: ms(last.created_at) - ms(first.created_at),
    entry_origin: views[0]!.origin,
    entry_path: views[0]!.path,
    exit_origin: views[views.length - 1]!.origin,
    exit_path: views[views.length - 1]!.path,
    screen_view_count: views.length,
    event_count: byTime.length,
    is_bounce: views.length <= 1 ? 1 : 0,
    revenue: byTime.filter((e) => e.name === 'revenue').reduce((sum, e) => sum + e.revenue, 0),
    profile_id: first.profile_id,
    device_id: first.device_id,
    referrer: first.referrer,
    referrer_name: first.referrer_name,
    referrer_type: first.referrer_type,
    utm_source: first.properties['__query.utm_source'] ?? '',
    utm_medium: first.properties['__query.utm_medium'] ?? '',
    utm_campaign: first.properties['__query.utm_campaign'] ?? '',
    utm_term: first.properties['__query.utm_term'] ?? '',
    utm_content: first.properties['__query.utm_content'] ?? '',
    country: first.country,
    region: first.region,
    city: first.city,
    device: first.device,
    brand: first.brand,
    model: first.model,
    browser: first.browser,
    browser_version: first.browser_version,
    os: first.os,
    os_version: first.os_version,
  }
}

const COLUMNS = Object.keys(expectedSession(single)).join(', ')

let rt: TestRuntime

const sessionless: Event = { ...base, name: 'screen_view', session_id: '', created_at: at(30), path: '/' }

beforeAll(async () => {
  rt = await openTestRuntime()
  // Without merges each insert block stays a part of its own, so the split is really there to combine.
  await rt.engine.client.command({ query: 'SYSTEM STOP MERGES sessions' })
  for (const block of blocks) {
    await rt.engine.client.insert({
      table: 'events',
      values: block.map((e) => ({ ...e, project_id: 'mv' })),
      format: 'JSONEachRow',
    })
  }
  await rt.engine.client.insert({ table: 'events', values: [{ ...sessionless, project_id: 'mv' }], format: 'JSONEachRow' })
})

afterAll(async () => {
  await rt?.dispose()
})

describe('the sessions materialized view', () => {
  it('keeps a partial row per insert block until FINAL combines them', async () => {
    const rows = await rt.runner.rows<{ id: string; parts: number }>(
      { name: 'partials', sql: "SELECT id, count() AS parts FROM sessions WHERE project_id = 'mv' GROUP BY id ORDER BY id", params: {} },
      { timeoutS: 10 },
    )
    const blocksOf = (id: string) => blocks.filter((b) => b.some((e) => e.session_id === id)).length
    expect(rows).toEqual(['custom-first', 'long', 'single'].map((id) => ({ id, parts: blocksOf(id) })))
  })

  it('combines the blocks of each session into the row its events define', async () => {
    const rows = await rt.runner.rows<Record<string, unknown>>(
      { name: 'sessions', sql: `SELECT ${COLUMNS} FROM sessions FINAL WHERE project_id = 'mv' ORDER BY id`, params: {} },
      { timeoutS: 10 },
    )
    expect(rows).toEqual([expectedSession(customFirst), expectedSession(long), expectedSession(single)])
  })

  it('ignores events without a session', async () => {
    const [row] = await rt.runner.rows<{ n: number }>(
      { name: 'empty', sql: "SELECT count() AS n FROM sessions FINAL WHERE project_id = 'mv' AND id = ''", params: {} },
      { timeoutS: 10 },
    )
    expect(row!.n).toBe(0)
  })
})

describe('the sessions layout migration (008)', () => {
  it('derives again, from the events already stored, the rows the view derived as they arrived', async () => {
    const migration = loadMigrations().find((m) => m.version === '008_sessions_by_attribute')!
    for (const statement of migration.statements) await rt.engine.client.command({ query: statement })
    const rows = await rt.runner.rows<Record<string, unknown>>(
      { name: 'sessions', sql: `SELECT ${COLUMNS} FROM sessions FINAL WHERE project_id = 'mv' ORDER BY id`, params: {} },
      { timeoutS: 10 },
    )
    expect(rows).toEqual([expectedSession(customFirst), expectedSession(long), expectedSession(single)])
    const [partials] = await rt.runner.rows<{ n: number }>(
      { name: 'partials', sql: "SELECT count() AS n FROM sessions WHERE project_id = 'mv'", params: {} },
      { timeoutS: 10 },
    )
    // One insert: each session is one row again.
    expect(partials!.n).toBe(new Set(blocks.flat().map((e) => e.session_id)).size)
  })
})

describe('the session timeline (009)', () => {
  // Every stored event once; only views carry their page.
  const expected = [...blocks.flat(), sessionless]
    .map((e) => ({ created_at: e.created_at, is_view: e.name === 'screen_view', path: e.name === 'screen_view' ? e.path : '' }))
    .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.path.localeCompare(b.path))
  const timeline = () =>
    rt.runner.rows<{ created_at: string; is_view: boolean; path: string }>(
      {
        name: 'timeline',
        sql: "SELECT toString(created_at) AS created_at, is_view, path FROM session_timeline WHERE project_id = 'mv' ORDER BY created_at, path",
        params: {},
      },
      { timeoutS: 10 },
    )

  it('receives every event once from the view, block by block', async () => {
    expect(await timeline()).toEqual(expected)
  })

  it('holds every event once after its migration derives it again from the stored events', async () => {
    const migration = loadMigrations().find((m) => m.version === '009_session_timeline')!
    for (const statement of migration.statements) await rt.engine.client.command({ query: statement })
    expect(await timeline()).toEqual(expected)
  })
})
