import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual, promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AlreadySeededError, seedProject } from '../../src/seed/seed.ts'
import { openTestRuntime, type TestRuntime } from '../helpers/runtime.ts'
import type { EventRow as StoredEvent } from '../helpers/event-row.ts'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))

const END = new Date('2026-03-02T00:00:00Z')
const DAYS = 14
const EVENTS = 40_000
const HOUR = 3_600_000
const parseTime = (s: string) => Date.parse(`${s.replace(' ', 'T')}Z`)

type EventRow = Pick<
  StoredEvent,
  'session_id' | 'name' | 'created_at' | 'device_id' | 'profile_id' | 'path' | 'origin'
  | 'referrer' | 'referrer_name' | 'referrer_type' | 'revenue' | 'duration' | 'properties'
  | 'country' | 'region' | 'city' | 'device' | 'brand' | 'model' | 'browser' | 'browser_version'
  | 'os' | 'os_version'
>

/** What a session shares across its events: the attributes of its first event. */
const SESSION_ATTRIBUTES = [
  'device_id', 'profile_id', 'referrer', 'referrer_name', 'referrer_type', 'country', 'region', 'city',
  'device', 'brand', 'model', 'browser', 'browser_version', 'os', 'os_version',
] as const
const UTM_KEYS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const

let rt: TestRuntime
let events: EventRow[]
let sessions: Map<string, EventRow[]>

beforeAll(async () => {
  rt = await openTestRuntime()
  await seedProject(rt.runner, { projectId: 'p', events: EVENTS, days: DAYS, seed: 7, end: END })
  events = await rt.runner.rows<EventRow>(
    {
      name: 'seeded_events',
      sql: `SELECT ${['session_id', 'name', 'created_at', 'path', 'origin', 'revenue', 'duration', 'properties', ...SESSION_ATTRIBUTES].join(', ')}
            FROM events WHERE project_id = 'p' ORDER BY session_id, created_at`,
      params: {},
    },
    { timeoutS: 60 },
  )
  sessions = new Map()
  for (const e of events) {
    const list = sessions.get(e.session_id) ?? []
    list.push(e)
    sessions.set(e.session_id, list)
  }
})

afterAll(async () => {
  await rt?.dispose()
})

function countBy<T>(items: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1)
  return counts
}

const descending = (counts: Map<string, number>) => [...counts.values()].sort((a, b) => b - a)

describe('seeded events', () => {
  it('are exactly as many as asked for, inside [end - days, end)', () => {
    expect(events).toHaveLength(EVENTS)
    const start = END.getTime() - DAYS * 24 * HOUR
    const outside = events.filter((e) => parseTime(e.created_at) < start || parseTime(e.created_at) >= END.getTime())
    expect(outside).toEqual([])
  })

  it('form sessions that start with a page view, in time order with gaps under 30 minutes', () => {
    const problems: string[] = []
    for (const [id, list] of sessions) {
      if (list[0]!.name !== 'screen_view') problems.push(`${id} starts with ${list[0]!.name}`)
      for (let i = 1; i < list.length; i++) {
        const gap = parseTime(list[i]!.created_at) - parseTime(list[i - 1]!.created_at)
        if (gap <= 0 || gap >= 30 * 60_000) problems.push(`${id} has a gap of ${gap} ms`)
      }
    }
    expect(problems).toEqual([])
  })

  it("carry their session's first-event attributes on every event", () => {
    const problems: string[] = []
    for (const [id, list] of sessions) {
      const first = list[0]!
      for (const e of list) {
        for (const attr of SESSION_ATTRIBUTES) if (e[attr] !== first[attr]) problems.push(`${id}: ${attr}`)
        for (const key of UTM_KEYS) {
          if (e.properties[`__query.${key}`] !== first.properties[`__query.${key}`]) problems.push(`${id}: ${key}`)
        }
      }
    }
    expect(problems).toEqual([])
  })

  it('have a bounce share between 30 % and 70 % and one to many page views per session', () => {
    const pageViews = [...sessions.values()].map((list) => list.filter((e) => e.name === 'screen_view').length)
    const bounces = pageViews.filter((n) => n <= 1).length
    expect(bounces / sessions.size).toBeGreaterThanOrEqual(0.3)
    expect(bounces / sessions.size).toBeLessThanOrEqual(0.7)
    expect(Math.min(...pageViews)).toBeGreaterThanOrEqual(1)
    expect(Math.max(...pageViews)).toBeGreaterThanOrEqual(10)
  })

  it('title page views, put revenue only on revenue events, and include custom events', () => {
    const problems = events.filter(
      (e) =>
        (e.name === 'screen_view') !== /\S/.test(e.properties.__title ?? '') || (e.name === 'revenue') !== e.revenue > 0,
    )
    expect(problems).toEqual([])
    const names = new Set(events.map((e) => e.name))
    expect(names).toContain('revenue')
    expect(names.size).toBeGreaterThanOrEqual(4)
  })

  it('give pages, cities and referrers a Zipf-like popularity with a long tail', () => {
    const pages = descending(countBy(events.filter((e) => e.name === 'screen_view'), (e) => `${e.origin}${e.path}`))
    expect(pages[0]!).toBeGreaterThan(2 * pages[4]!)
    expect(pages.length).toBeGreaterThan(50)
    const firsts = [...sessions.values()].map((list) => list[0]!)
    const cities = descending(countBy(firsts, (e) => e.city))
    expect(cities[0]!).toBeGreaterThan(1.5 * cities[2]!)
    expect(cities.length).toBeGreaterThan(10)
    const referrers = countBy(firsts, (e) => e.referrer_name)
    const direct = firsts.filter((e) => e.referrer === '' && e.referrer_name === '' && e.referrer_type === '').length
    expect(direct / firsts.length).toBeGreaterThan(0.1)
    expect(direct / firsts.length).toBeLessThan(0.6)
    expect(referrers.size).toBeGreaterThan(5)
    const tagged = firsts.filter((e) => e.properties['__query.utm_source'] !== undefined).length
    expect(tagged / firsts.length).toBeGreaterThan(0.05)
    expect(tagged / firsts.length).toBeLessThan(0.5)
  })

  it('keep geography, devices and software coherent', () => {
    const placesOfCity = new Map<string, Set<string>>()
    const makersOfModel = new Map<string, Set<string>>()
    const add = (map: Map<string, Set<string>>, key: string, value: string) => map.set(key, (map.get(key) ?? new Set()).add(value))
    const problems: string[] = []
    for (const e of events) {
      add(placesOfCity, e.city, `${e.country}/${e.region}`)
      if (e.model) add(makersOfModel, e.model, `${e.device}/${e.brand}`)
      const mobileOs = ['iOS', 'Android'].includes(e.os)
      if (mobileOs === (e.device === 'desktop')) problems.push(`${e.os} on ${e.device}`)
      if ((e.os === 'iOS' || e.os === 'Mac OS') && e.brand !== 'Apple') problems.push(`${e.os} by ${e.brand}`)
      if (e.browser === 'Safari' && !['iOS', 'Mac OS'].includes(e.os)) problems.push(`Safari on ${e.os}`)
      if (e.browser === 'Samsung Internet' && e.os !== 'Android') problems.push(`Samsung Internet on ${e.os}`)
    }
    for (const [city, places] of placesOfCity) if (places.size > 1) problems.push(`${city} in ${[...places]}`)
    for (const [model, makers] of makersOfModel) if (makers.size > 1) problems.push(`${model} by ${[...makers]}`)
    expect(problems).toEqual([])
    expect(placesOfCity.size).toBeGreaterThan(10)
    expect(makersOfModel.size).toBeGreaterThan(5)
  })

  it('follow a daily and a weekly rhythm', () => {
    const byHour = countBy(events, (e) => String(new Date(parseTime(e.created_at)).getUTCHours()))
    const at = (h: number) => byHour.get(String(h)) ?? 0
    expect(at(13) + at(14) + at(15)).toBeGreaterThan(3 * (at(2) + at(3) + at(4)))
    // The period holds two of every weekday, so raw counts compare weekdays with weekend days.
    const byWeekday = countBy(events, (e) => String(new Date(parseTime(e.created_at)).getUTCDay()))
    const weekend = ((byWeekday.get('0') ?? 0) + (byWeekday.get('6') ?? 0)) / 2
    const weekdays = [1, 2, 3, 4, 5].reduce((sum, d) => sum + (byWeekday.get(String(d)) ?? 0), 0) / 5
    expect(weekdays).toBeGreaterThan(1.2 * weekend)
  })
})

describe('seeded profiles and event meta', () => {
  it('mix anonymous and identified visitors, with a profile row for every identified one', async () => {
    const identified = new Map<string, { first: string; last: string }>()
    for (const e of events) {
      if (e.profile_id === e.device_id) continue
      const seen = identified.get(e.profile_id)
      identified.set(e.profile_id, {
        first: !seen || e.created_at < seen.first ? e.created_at : seen.first,
        last: !seen || e.created_at > seen.last ? e.created_at : seen.last,
      })
    }
    const anonymous = events.filter((e) => e.profile_id === e.device_id).length
    expect(anonymous / events.length).toBeGreaterThan(0.3)
    expect(identified.size).toBeGreaterThan(100)
    const rows = await rt.runner.rows<{ id: string; created_at: string; last_seen_at: string; email: string }>(
      { name: 'profiles', sql: "SELECT id, created_at, last_seen_at, email FROM profiles FINAL WHERE project_id = 'p'", params: {} },
      { timeoutS: 30 },
    )
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(identified.keys()))
    const wrong = rows.filter(
      (r) =>
        r.created_at !== identified.get(r.id)!.first ||
        r.last_seen_at !== identified.get(r.id)!.last ||
        !/^[a-z0-9.]+@example\.com$/.test(r.email),
    )
    expect(wrong).toEqual([])
  })

  it('describe every custom event name that occurs', async () => {
    const rows = await rt.runner.rows<{ name: string }>(
      { name: 'event_meta', sql: "SELECT name FROM event_meta FINAL WHERE project_id = 'p'", params: {} },
      { timeoutS: 30 },
    )
    const custom = new Set(events.map((e) => e.name).filter((n) => n !== 'screen_view'))
    expect(new Set(rows.map((r) => r.name))).toEqual(custom)
  })
})

describe('the sessions table after a seed', () => {
  it('holds one row per session, matching the events it was derived from', async () => {
    interface SessionRow {
      id: string
      created_at: string
      ended_at: string
      duration: number
      entry_origin: string
      entry_path: string
      exit_origin: string
      exit_path: string
      screen_view_count: number
      event_count: number
      is_bounce: number
      revenue: number
      referrer_name: string
      utm_source: string
      city: string
      browser: string
      profile_id: string
    }
    const rows = await rt.runner.rows<SessionRow>(
      {
        name: 'sessions',
        sql: `SELECT id, created_at, ended_at, duration, entry_origin, entry_path, exit_origin, exit_path,
                     screen_view_count, event_count, is_bounce, revenue, referrer_name, utm_source, city, browser, profile_id
              FROM sessions FINAL WHERE project_id = 'p'`,
        params: {},
      },
      { timeoutS: 30 },
    )
    expect(rows).toHaveLength(sessions.size)
    const mismatches: { actual: SessionRow; expected: SessionRow | undefined }[] = []
    for (const row of rows) {
      const list = sessions.get(row.id)
      if (!list) {
        mismatches.push({ actual: row, expected: undefined })
        continue
      }
      const views = list.filter((e) => e.name === 'screen_view')
      const first = list[0]!
      const last = list[list.length - 1]!
      const expected: SessionRow = {
        id: row.id,
        created_at: first.created_at,
        ended_at: last.created_at,
        duration: parseTime(last.created_at) - parseTime(first.created_at),
        entry_origin: views[0]!.origin,
        entry_path: views[0]!.path,
        exit_origin: views[views.length - 1]!.origin,
        exit_path: views[views.length - 1]!.path,
        screen_view_count: views.length,
        event_count: list.length,
        is_bounce: views.length <= 1 ? 1 : 0,
        revenue: list.reduce((sum, e) => sum + (e.name === 'revenue' ? e.revenue : 0), 0),
        referrer_name: first.referrer_name,
        utm_source: first.properties['__query.utm_source'] ?? '',
        city: first.city,
        browser: first.browser,
        profile_id: first.profile_id,
      }
      if (!isDeepStrictEqual(row, expected)) mismatches.push({ actual: row, expected })
    }
    // Every row matched a distinct session of the events, and there are as many rows as sessions.
    expect(mismatches).toEqual([])
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length)
  })
})

describe('seedProject', () => {
  it('inserts in chunks, reports progress and hits the exact count across several inserts', async () => {
    const progress: [number, number][] = []
    // Just over one insert's worth: a full insert, then a short one that cuts its last session.
    const total = 510_000
    const result = await seedProject(rt.runner, { projectId: 'big', events: total, days: 30, seed: 1, end: END }, (done, of) =>
      progress.push([done, of]),
    )
    expect(result.events).toBe(total)
    expect(progress.length).toBeGreaterThanOrEqual(3)
    expect(progress.at(-1)).toEqual([total, total])
    for (let i = 1; i < progress.length; i++) expect(progress[i]![0]).toBeGreaterThan(progress[i - 1]![0])
    interface Counts {
      events: number
      distinct_sessions: number
      sessions: number
      session_events: number
      identified: number
      profiles: number
      other_identified: number
      other_profiles: number
    }
    const [counts] = await rt.runner.rows<Counts>(
      {
        name: 'big_counts',
        sql: `SELECT
                (SELECT count() FROM events WHERE project_id = 'big') AS events,
                (SELECT uniqExact(session_id) FROM events WHERE project_id = 'big') AS distinct_sessions,
                (SELECT count() FROM sessions FINAL WHERE project_id = 'big') AS sessions,
                (SELECT sum(event_count) FROM sessions FINAL WHERE project_id = 'big') AS session_events,
                (SELECT uniqExact(profile_id) FROM events WHERE project_id = 'big' AND profile_id != device_id) AS identified,
                (SELECT count() FROM profiles FINAL WHERE project_id = 'big') AS profiles,
                (SELECT uniqExact(profile_id) FROM events WHERE project_id = 'p' AND profile_id != device_id) AS other_identified,
                (SELECT count() FROM profiles FINAL WHERE project_id = 'p') AS other_profiles`,
        params: {},
      },
      { timeoutS: 60 },
    )
    expect(counts!.events).toBe(total)
    expect(counts!.sessions).toBe(counts!.distinct_sessions)
    expect(counts!.session_events).toBe(total)
    // A second seeded project gets its own profiles and leaves the first one's alone.
    expect(counts!.profiles).toBe(counts!.identified)
    expect(counts!.other_profiles).toBe(counts!.other_identified)
  })

  it.each([1, 2, 3, 7, 1025])('inserts exactly %i events when asked for so few', async (total) => {
    const projectId = `small-${total}`
    expect(await seedProject(rt.runner, { projectId, events: total, days: 1, seed: 5, end: END })).toEqual({ events: total })
    const [row] = await rt.runner.rows<{ n: number; first: string }>(
      {
        name: 'small_count',
        sql: `SELECT count() AS n, argMin(name, created_at) AS first FROM events WHERE project_id = {p:String}`,
        params: { p: projectId },
      },
      { timeoutS: 10 },
    )
    expect(row).toEqual({ n: total, first: 'screen_view' })
  })

  it('refuses to add the same seed to a project twice', async () => {
    const req = { projectId: 'p', events: 10, days: DAYS, seed: 7, end: END }
    await expect(seedProject(rt.runner, req)).rejects.toBeInstanceOf(AlreadySeededError)
    const [row] = await rt.runner.rows<{ n: number }>(
      { name: 'count', sql: "SELECT count() AS n FROM events WHERE project_id = 'p'", params: {} },
      { timeoutS: 10 },
    )
    expect(row!.n).toBe(EVENTS)
  })
})

describe('determinism', () => {
  const dirs: string[] = []
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  async function seedElsewhere(seed: number) {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-seed-'))
    dirs.push(dir)
    const request = JSON.stringify({ projectId: 'd', events: 20_000, days: 10, seed, end: '2026-02-10T08:30:00.000Z' })
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/helpers/seed-checksum.ts', dir, request], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'silent' },
    })
    return JSON.parse(stdout) as { sums: Record<string, { rows: number; sum: string }>; sessionsParts: { levels: number[]; rows: number } }
  }

  it('writes one row per session into each sessions part, as the view gives them, not folded again on insert', async () => {
    const { sums, sessionsParts } = await seedElsewhere(5)
    // No two rows of a seed's insert share a session, so the insert skips the fold (which would write level 1).
    expect(sessionsParts).toEqual({ levels: [0], rows: sums['sessions FINAL']!.rows })
    expect(sessionsParts.rows).toBeGreaterThan(1000)
  })

  it('gives the same rows, column for column, from the same arguments in separate data directories', async () => {
    const [{ sums: a }, { sums: b }, { sums: other }] = await Promise.all([seedElsewhere(3), seedElsewhere(3), seedElsewhere(4)])
    expect(a.events!.rows).toBe(20_000)
    expect(a['sessions FINAL']!.rows).toBeGreaterThan(1000)
    expect(a['profiles FINAL']!.rows).toBeGreaterThan(100)
    expect(a['event_meta FINAL']!.rows).toBeGreaterThan(0)
    expect(b).toEqual(a)
    expect(other.events!.rows).toBe(20_000)
    expect(other.events!.sum).not.toBe(a.events!.sum)
    expect(other['sessions FINAL']!.sum).not.toBe(a['sessions FINAL']!.sum)
    expect(other['profiles FINAL']!.sum).not.toBe(a['profiles FINAL']!.sum)
  })
})
