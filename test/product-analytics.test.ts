/**
 * Funnels, retention, cohorts, user flows, active users and engagement (src/routes/product.ts)
 * through the generated typed client, each number held to product-model.ts, computed from the
 * inserted rows: three projects (UTC, Stockholm across its DST change, Kolkata's half-hour
 * offset), identified and anonymous people on one or two devices, equal timestamps in a funnel,
 * sessions across the windows' edges, and events after the sealed history's C.
 */
import { DateTime } from 'luxon'
import createClient from 'openapi-fetch'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../src/auth/clients.ts'
import { createProject } from '../src/projects.ts'
import { assembleFunnel, funnelStatement } from '../src/query/product/funnel.ts'
import type { FlowRow } from '../src/query/product/sankey.ts'
import { NAME_BIT, sealedFlow, sealedFunnel } from '../src/query/product/sealed-units.ts'
import { flowStatement } from '../src/query/product/user-flow.ts'
import { productRange } from '../src/query/product/window.ts'
import { readSealedLatest, sealedLatestStatement, type SealedLatestRow } from '../src/query/sealed.ts'
import { SealedHistory } from '../src/services/sealed/index.ts'
import type { paths } from './generated/quarry-api.js'
import { NOW, projectEvents, PROJECTS } from './fixtures/product-data.ts'
import { activeUsers, cohorts, engagement, firstEventDay, flowPaths, funnelUsers, retention, type Win } from './fixtures/product-model.ts'
import type { EventRow } from './helpers/event-row.ts'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'
import { toRow } from './fixtures/insights-model.ts'

let rt: TestRuntime
const events = new Map<string, EventRow[]>()
type Client = ReturnType<typeof createClient<paths>>
/** The app without the sealed history, and one whose builds are done. */
let plain: Client
let sealed: Client
let raw: (path: string) => Promise<Response>
/** The root client's headers, and an app's answer to a path under them. */
let rootHeaders: Record<string, string>
const request = (app: ReturnType<typeof testApp>, path: string) => app.request(`http://quarry.test${path}`, { headers: rootHeaders })
let sealedApp: ReturnType<typeof testApp>

/** Local midnights the windows below start and end on: sessions are placed across them. */
const day = (date: string, tz: string) => DateTime.fromISO(date, { zone: tz }).toMillis()
const WINDOW = { startDate: '2026-03-20', endDate: '2026-04-09' }
const win = (tz: string, w = WINDOW): Win => ({ from: day(w.startDate, tz), to: DateTime.fromISO(w.endDate, { zone: tz }).plus({ days: 1 }).toMillis(), tz })

const jsonQuery = (query: Record<string, unknown>) =>
  new URLSearchParams(
    Object.entries(query)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]),
  ).toString()

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000' })
  for (const p of Object.values(PROJECTS)) {
    await createProject(rt.runner, { id: p.id, name: p.id, timezone: p.timezone, organizationId: 'org-pa' })
    const edges = [day(WINDOW.startDate, p.timezone), win(p.timezone).to]
    const rows = projectEvents(p.id, p.seed, edges)
    events.set(p.id, rows)
    await rt.engine.client.insert({ table: 'events', values: rows, format: 'JSONEachRow' })
  }
  const root = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'org-pa', name: 'root-pa' })
  const headers = { 'openpanel-client-id': root.id, 'openpanel-client-secret': root.secret }
  rootHeaders = headers
  const history = sealedHistory()
  // Kolkata's half-hour offset splits UTC hours: its requests read the events without asking for a build.
  for (const p of [PROJECTS.utc, PROJECTS.sto]) await history.build(p.id)
  const apps = { plain: testApp(rt, { now: () => NOW }), sealed: testApp(rt, { now: () => NOW, sealed: history }) }
  const client = (app: ReturnType<typeof testApp>) =>
    createClient<paths>({ baseUrl: 'http://quarry.test', fetch: async (req) => app.fetch(req), headers, querySerializer: jsonQuery })
  plain = client(apps.plain)
  sealedApp = apps.sealed
  sealed = client(apps.sealed)
  raw = async (path) => apps.plain.request(`http://quarry.test${path}`, { headers })
})

/** Every history this file makes: requests schedule builds, which must end before the engine closes. */
const histories: SealedHistory[] = []
function sealedHistory(opts: { liveSnapshots?: boolean } = {}): SealedHistory {
  const history = new SealedHistory({ runner: rt.runner, logger: rt.logger, now: () => NOW, queryTimeoutS: 10, rebuildIntervalMs: 0, insertsTtlMs: 0, ...opts })
  histories.push(history)
  return history
}

afterAll(async () => {
  await Promise.all(histories.map((h) => h.stop()))
  await rt?.dispose()
})

/** Whether an answer says it read the sealed history (X-Quarry-Sealed-Until). */
const expectSealed = (response: Response, sealedRead: boolean) => expect(response.headers.get('x-quarry-sealed-until') !== null, response.url).toBe(sealedRead)

const STEPS = ['session_start', 'signup', 'add_to_cart', 'checkout']

describe('funnel', () => {
  it('counts sessions and people per step as the brute-force matcher does, in each timezone, with filters', async () => {
    for (const p of Object.values(PROJECTS)) {
      const rows = events.get(p.id)!
      for (const groupBy of ['session_id', 'profile_id'] as const) {
        for (const windowHours of [1, 24]) {
          const { data, error, response } = await plain.GET('/insights/{projectId}/funnel', {
            params: { path: { projectId: p.id }, query: { ...WINDOW, steps: STEPS, windowHours, groupBy } },
          })
          expect(error, JSON.stringify(error)).toBeUndefined()
          const users = funnelUsers(rows, win(p.timezone), STEPS, windowHours, groupBy)
          expect(data!.steps.map((s) => s.users), `${p.id} ${groupBy} ${windowHours}h`).toEqual(users)
          expect(users[1]).toBeGreaterThan(0)
          expect(data!.totalUsers).toBe(users[0])
          expect(data!.completedUsers).toBe(users.at(-1))
          expect(data!.overallConversionRate).toBe(Math.round((users.at(-1)! / users[0]!) * 10000) / 100)
          expect(data!.steps[1]!.dropoffPercent).toBe(Math.round(((users[1]! - users[2]!) / users[1]!) * 10000) / 100)
          expect(data!.steps.at(-1)!.dropoffPercent).toBeNull()
          const drops = users.slice(0, -1).map((u, i) => u - users[i + 1]!)
          expect(data!.steps.findIndex((s) => s.isHighestDropoff)).toBe(drops.indexOf(Math.max(...drops)))
          expect(response.headers.get('x-quarry-timezone')).toBe(p.timezone)
        }
      }
    }
    // A session attribute and an event property: the step events of matching sessions, and matching events.
    const p = PROJECTS.sto
    const filters = [
      { name: 'country', operator: 'is' as const, value: ['SE'] },
      { name: 'properties.plan', operator: 'is' as const, value: ['pro'] },
    ]
    const { data } = await plain.GET('/insights/{projectId}/funnel', { params: { path: { projectId: p.id }, query: { ...WINDOW, steps: STEPS, filters } } })
    const expected = funnelUsers(events.get(p.id)!, win(p.timezone), STEPS, 24, 'session_id', (e) => e.country === 'SE' && e.properties.plan === 'pro')
    expect(data!.steps.map((s) => s.users)).toEqual(expected)
  })

  it('chains equal timestamps only when strictly later, and reads OpenPanel spellings of steps', async () => {
    const p = PROJECTS.utc
    const tie = events.get(p.id)!.filter((e) => e.session_id === `${p.id}-tie`)
    const w = { startDate: '2026-04-02', endDate: '2026-04-02' }
    const steps = ['session_start', 'screen_view', 'signup']
    const repeated = await raw(`/insights/${p.id}/funnel?startDate=2026-04-02&endDate=2026-04-02&steps=session_start&steps=screen_view&steps=signup`)
    const body = (await repeated.json()) as { steps: { users: number }[] }
    expect(body.steps.map((s) => s.users)).toEqual(funnelUsers(events.get(p.id)!, win('UTC', w), steps, 24, 'session_id'))
    // The tie session completes: start at t, screen_view at t+1 min (as a second start), signup later.
    expect(funnelUsers(tie, win('UTC', w), steps, 24, 'session_id')).toEqual([1, 1, 1])
    const one = await raw(`/insights/${p.id}/funnel?steps=signup`)
    expect(one.status).toBe(400)
    expect(((await one.json()) as { message: string }).message).toContain('steps must have between 2 and 10 items')
    expect((await raw(`/insights/${p.id}/funnel?steps=a&steps=b&windowHours=721`)).status).toBe(400)
    expect((await raw(`/insights/${p.id}/funnel?steps=a&steps=b&groupBy=device_id`)).status).toBe(400)
  })
})

describe('retention', () => {
  it('weeks start on Monday in the project timezone (or timezone=), identified profiles only, filtered', async () => {
    for (const p of Object.values(PROJECTS)) {
      for (const client of [plain, sealed]) {
        const all = await client.GET('/insights/{projectId}/retention', { params: { path: { projectId: p.id }, query: {} } })
        expect(all.data, `${p.id} ${JSON.stringify(all.error)}`).toEqual(retention(events.get(p.id)!, { from: 0, to: Infinity, tz: p.timezone }))
        expectSealed(all.response, client === sealed && p.timezone !== 'Asia/Kolkata')
        // New York's hours are whole: a Kolkata project read in it would ask for a build it has not got.
        if (p === PROJECTS.kol && client === sealed) continue
        const windowed = await client.GET('/insights/{projectId}/retention', { params: { path: { projectId: p.id }, query: { ...WINDOW, timezone: 'America/New_York' } } })
        expect(windowed.data, `${p.id} ${JSON.stringify(windowed.error)}`).toEqual(retention(events.get(p.id)!, win('America/New_York')))
        expectSealed(windowed.response, client === sealed)
      }
    }
    const p = PROJECTS.utc
    const { data, response } = await sealed.GET('/insights/{projectId}/retention', {
      params: { path: { projectId: p.id }, query: { ...WINDOW, timezone: 'America/New_York', filters: [{ name: 'properties.plan', operator: 'is', value: ['pro'] }] } },
    })
    expect(data).toEqual(retention(events.get(p.id)!, win('America/New_York'), (e) => e.properties.plan === 'pro'))
    expect(data!.some((r) => r.retained_users > 0)).toBe(true)
    expectSealed(response, false)
  })

  it('cohorts: 13 weekly columns by default, on or after, weighted average over mature cohorts', async () => {
    for (const p of Object.values(PROJECTS)) {
      const thisWeek = DateTime.fromJSDate(NOW, { zone: p.timezone }).startOf('week')
      const w = { from: thisWeek.minus({ weeks: 12 }).toMillis(), to: DateTime.fromJSDate(NOW, { zone: p.timezone }).startOf('day').plus({ days: 1 }).toMillis(), tz: p.timezone }
      const expected = cohorts(events.get(p.id)!, w, NOW.getTime())
      expect(expected[0]!.values).toHaveLength(13)
      for (const client of [plain, sealed]) {
        const { data, error, response } = await client.GET('/insights/{projectId}/retention/cohort', { params: { path: { projectId: p.id }, query: {} } })
        expect(data, `${p.id} ${JSON.stringify(error)}`).toEqual(expected)
        expectSealed(response, client === sealed && p.timezone !== 'Asia/Kolkata')
      }
    }
    // A window ending mid-week in the past reads the events; one ending on a Monday the sealed history.
    const p = PROJECTS.sto
    for (const query of [WINDOW, { startDate: '2026-02-16', endDate: '2026-03-29' }]) {
      const { data, response } = await sealed.GET('/insights/{projectId}/retention/cohort', { params: { path: { projectId: p.id }, query } })
      expect(data).toEqual(cohorts(events.get(p.id)!, win(p.timezone, query), NOW.getTime()))
      expectSealed(response, query !== WINDOW)
    }
  })
})

describe('active users and engagement', () => {
  it('rolling windows of local days, all time by default, the same with and without the sealed history', async () => {
    for (const p of Object.values(PROJECTS)) {
      const rows = events.get(p.id)!
      const today = DateTime.fromJSDate(NOW, { zone: p.timezone }).toISODate()!
      for (const days of [1, 7, 30]) {
        const expected = activeUsers(rows, p.timezone, days, firstEventDay(rows, p.timezone), today, NOW.getTime() + 86_400_000)
        for (const client of [plain, sealed]) {
          const { data, response } = await client.GET('/insights/{projectId}/active_users', { params: { path: { projectId: p.id }, query: { days } } })
          expect(data!.series, `${p.id} ${days}`).toEqual(expected)
          expect(data!.label).toBe({ 1: 'DAU', 7: 'WAU', 30: 'MAU' }[days])
          expectSealed(response, client === sealed && p.timezone !== 'Asia/Kolkata')
        }
      }
      const { data } = await sealed.GET('/insights/{projectId}/active_users', { params: { path: { projectId: p.id }, query: { ...WINDOW, days: 7 } } })
      const w = win(p.timezone)
      expect(data!.series).toEqual(activeUsers(rows, p.timezone, 7, WINDOW.startDate, WINDOW.endDate, w.to))
    }
  })

  it('engagement: identified profiles by local days since last seen', async () => {
    for (const p of Object.values(PROJECTS)) {
      for (const client of [plain, sealed]) {
        const { data, error, response } = await client.GET('/insights/{projectId}/engagement', { params: { path: { projectId: p.id }, query: {} } })
        expect(data, `${p.id} ${JSON.stringify(error)}`).toEqual(engagement(events.get(p.id)!, p.timezone, NOW.getTime()))
        expectSealed(response, client === sealed && p.timezone !== 'Asia/Kolkata')
      }
    }
    expect((await raw(`/insights/${PROJECTS.utc.id}/engagement?range=7d`)).status).toBe(400)
  })
})

describe('user flow', () => {
  it('entries, transitions by position and the final nodes follow the paths of the sessions', async () => {
    const p = PROJECTS.sto
    const w = win(p.timezone)
    const { data, error } = await plain.GET('/insights/{projectId}/user_flow', { params: { path: { projectId: p.id }, query: { ...WINDOW, startEvent: 'signup', steps: 4 } } })
    expect(error).toBeUndefined()
    const paths = flowPaths(events.get(p.id)!, w, 'signup', 4)
    expect(paths.length).toBeGreaterThan(5)
    expect(data!.nodes[0]).toMatchObject({ id: 'signup::step1', value: paths.length, percentage: 100, step: 1 })
    // Every link's value is the number of paths taking that transition at that position (merged into finals by label).
    const count = (s: string, t: string, pos: number) => paths.filter((q) => q[pos - 1] === s && q[pos] === t).length
    for (const link of data!.links) {
      const [source, sourceStep] = link.source.split('::step') as [string, string]
      const [target, targetTag] = link.target.split('::')
      const pos = Number(sourceStep)
      if (targetTag === 'final') {
        expect(link.value).toBe(count(source, target!, pos))
      } else {
        expect(targetTag).toBe(`step${pos + 1}`)
        expect(link.value).toBe(count(source, target!, pos))
      }
    }
    // Nodes' values are what flows into them; the first step's out-flow is every path's second name.
    const second = new Map<string, number>()
    for (const q of paths) second.set(q[1]!, (second.get(q[1]!) ?? 0) + 1)
    const top = [...second.values()].sort((a, b) => b - a).slice(0, 3)
    expect(data!.links.filter((l) => l.source === 'signup::step1').map((l) => l.value).sort((a, b) => b - a)).toEqual(top)
    expect(data!.node_count).toBe(data!.nodes.length)
    const bad = await raw(`/insights/${p.id}/user_flow?startEvent=signup&mode=between`)
    expect(bad.status).toBe(400)
    expect((await raw(`/insights/${p.id}/user_flow`)).status).toBe(400)
  })
})

describe('funnel and user flow from the sealed history', () => {
  // A project of its own (New York, across its DST change on 8 March) whose build holds a session
  // that crosses C, so that the late event at the end changes no other test's build.
  const p = { id: 'pa-seal', timezone: 'America/New_York', seed: 44 }
  const PAST = { startDate: '2026-03-02', endDate: '2026-03-20' }
  const RECENT = { startDate: '2026-04-13', endDate: '2026-04-15' }
  const ZONES = [p.timezone, 'Asia/Kolkata', 'Europe/Stockholm']
  let rows: EventRow[]
  const row = (at: number, name: string, session: string, who: string, profile = who) => ({
    ...events.get(PROJECTS.utc.id)![0]!,
    id: crypto.randomUUID(),
    project_id: p.id,
    created_at: toRow(at),
    name,
    session_id: session,
    device_id: who,
    profile_id: profile,
  })
  const utc = (text: string) => Date.parse(`${text}Z`)
  /**
   * People whose person a funnel by profile_id must resolve from more than one session: a session
   * that identifies itself midway (after an anonymous session of the same device), events without
   * a session, a device identified only after C and one anonymous after C but identified before,
   * a device identified as two profiles in the window (the first counts), one identified only
   * before the window, and one identified first by a session across the window's start; and
   * people whose steps the build's episodes (cut after a day without events) must not part: a
   * step exactly a day after the one before it, one a millisecond later (which a window of 720
   * hours still chains), and a profile that is also a device, anonymous there and identified on
   * another device in the same minutes; and one whose event x26 shares signup's bit in the
   * episodes' masks of names (NAME_BIT), so that its episode is read for level 2 and is not at it;
   * and a device identified before C after the last `linked` episode and anonymous after C, so that
   * windows from then on read the held people and the link from their snapshot (sealed_live_held).
   */
  const people = () => {
    const d = (name: string) => `${p.id}-${name}`
    return [
      row(utc('2026-03-05T09:00:00'), 'session_start', d('mix-s1'), d('mix')),
      row(utc('2026-03-05T09:01:00'), 'signup', d('mix-s1'), d('mix')),
      row(utc('2026-03-06T09:00:00'), 'session_start', d('mix-s2'), d('mix')),
      row(utc('2026-03-06T09:02:00'), 'add_to_cart', d('mix-s2'), d('mix'), d('u-mix')),
      row(utc('2026-03-06T09:03:00'), 'checkout', d('mix-s2'), d('mix'), d('u-mix')),
      row(utc('2026-03-10T10:00:00'), 'session_start', d('nos-s1'), d('nos')),
      row(utc('2026-03-10T10:05:00'), 'signup', '', d('nos'), d('u-nos')),
      row(utc('2026-03-10T10:06:00'), 'add_to_cart', '', d('nos'), d('u-nos')),
      row(utc('2026-03-10T10:07:00'), 'checkout', '', d('nos')),
      row(utc('2026-04-14T20:00:00'), 'session_start', d('aft-s1'), d('aft')),
      row(utc('2026-04-14T20:01:00'), 'signup', d('aft-s1'), d('aft')),
      row(utc('2026-04-15T11:10:00'), 'screen_view', d('aft-s2'), d('aft'), d('u-aft')),
      row(utc('2026-04-15T11:12:00'), 'add_to_cart', d('aft-s2'), d('aft'), d('u-aft')),
      row(utc('2026-04-13T08:00:00'), 'session_start', d('bef-s1'), d('bef'), d('u-bef')),
      row(utc('2026-04-15T11:15:00'), 'signup', d('bef-s2'), d('bef')),
      row(utc('2026-04-15T11:16:00'), 'add_to_cart', d('bef-s2'), d('bef')),
      row(utc('2026-03-12T08:00:00'), 'session_start', d('two-s1'), d('two')),
      row(utc('2026-03-12T08:30:00'), 'screen_view', d('two-s2'), d('two'), d('u-two-a')),
      row(utc('2026-03-13T08:00:00'), 'session_start', d('two-s3'), d('two'), d('u-two-b')),
      row(utc('2026-03-13T08:01:00'), 'signup', d('two-s3'), d('two')),
      row(utc('2026-03-13T08:02:00'), 'add_to_cart', d('two-s3'), d('two'), d('u-two-b')),
      row(utc('2026-02-20T08:00:00'), 'screen_view', d('old-s1'), d('old'), d('u-old')),
      row(utc('2026-03-15T08:00:00'), 'session_start', d('old-s2'), d('old')),
      row(utc('2026-03-15T08:01:00'), 'signup', d('old-s2'), d('old')),
      // Identified first by a session across New York's start of RECENT (04:00Z), whose first event
      // in that window is not its first: the link goes to u-edge-a there, as everywhere.
      row(utc('2026-04-13T03:50:00'), 'screen_view', d('edge-s1'), d('edge'), d('u-edge-a')),
      row(utc('2026-04-13T04:10:00'), 'session_start', d('edge-s1'), d('edge'), d('u-edge-a')),
      row(utc('2026-04-13T05:00:00'), 'screen_view', d('edge-s2'), d('edge'), d('u-edge-b')),
      row(utc('2026-04-14T09:00:00'), 'signup', d('edge-s3'), d('edge')),
      row(utc('2026-04-14T09:01:00'), 'add_to_cart', d('edge-s3'), d('edge')),
      row(utc('2026-03-11T10:00:00'), 'session_start', d('day-s1'), d('day'), d('u-day')),
      row(utc('2026-03-12T10:00:00'), 'signup', d('day-s2'), d('day'), d('u-day')),
      row(utc('2026-03-11T10:00:00'), 'session_start', d('late-s1'), d('late'), d('u-late')),
      row(utc('2026-03-12T10:00:00.001'), 'signup', d('late-s2'), d('late'), d('u-late')),
      row(utc('2026-03-14T10:00:00'), 'session_start', d('tw-s1'), d('tw')),
      row(utc('2026-03-14T10:01:00'), 'signup', d('tw-s2'), d('tw-b'), d('tw')),
      row(utc('2026-03-14T10:02:00'), 'add_to_cart', d('tw-s1'), d('tw')),
      row(utc('2026-03-16T10:00:00'), 'session_start', d('hash-s1'), d('hash'), d('u-hash')),
      row(utc('2026-03-16T10:01:00'), 'x26', d('hash-s1'), d('hash'), d('u-hash')),
      row(utc('2026-03-16T10:02:00'), 'add_to_cart', d('hash-s1'), d('hash'), d('u-hash')),
      row(utc('2026-04-15T02:00:00'), 'session_start', d('cand-s1'), d('cand'), d('u-cand')),
      row(utc('2026-04-15T11:20:00'), 'signup', d('cand-s2'), d('cand')),
      row(utc('2026-04-15T11:21:00'), 'add_to_cart', d('cand-s2'), d('cand')),
    ]
  }

  beforeAll(async () => {
    await createProject(rt.runner, { id: p.id, name: p.id, timezone: p.timezone, organizationId: 'org-pa' })
    const edges = [PAST, RECENT].flatMap((w) => ZONES.flatMap((tz) => [day(w.startDate, tz), win(tz, w).to])).filter((t) => t < NOW.getTime())
    const c = Date.parse('2026-04-15T11:00:00Z')
    rows = [
      ...projectEvents(p.id, p.seed, edges),
      // Across C when built: its events before C are sealed, those after it are not.
      row(c - 10 * 60_000, 'session_start', `${p.id}-across`, `${p.id}-across`),
      row(c - 5 * 60_000, 'screen_view', `${p.id}-across`, `${p.id}-across`),
      row(c - 5 * 60_000, 'session_start', `${p.id}-across`, `${p.id}-across`),
      row(c + 5 * 60_000, 'signup', `${p.id}-across`, `${p.id}-across`),
      row(c + 5 * 60_000, 'add_to_cart', `${p.id}-across`, `${p.id}-across`),
      ...people(),
    ]
    await rt.engine.client.insert({ table: 'events', values: rows, format: 'JSONEachRow' })
    const history = sealedHistory()
    await history.build(p.id)
  })

  /** Both apps' answers to a route: equal, and only the sealed one read the build. */
  async function both(path: '/insights/{projectId}/funnel' | '/insights/{projectId}/user_flow', query: Record<string, unknown>, sealedRead: boolean) {
    const answers = []
    for (const client of [plain, sealed]) {
      const { data, error, response } = await client.GET(path, { params: { path: { projectId: p.id }, query: query as never } })
      expect(error, JSON.stringify(error)).toBeUndefined()
      expectSealed(response, client === sealed && sealedRead)
      answers.push(data)
    }
    expect(answers[1], JSON.stringify(query)).toEqual(answers[0])
    return answers[1] as never
  }

  it('funnels per session equal the matcher and the events, across C, edges, ties and timezones; per person and filtered read the events', async () => {
    for (const w of [PAST, RECENT]) {
      for (const timezone of ZONES) {
        for (const [steps, windowHours] of [[STEPS, 24], [['session_start', 'screen_view', 'signup', 'add_to_cart', 'checkout'], 1]] as const) {
          const data = (await both('/insights/{projectId}/funnel', { ...w, timezone, steps, windowHours }, true)) as { steps: { users: number }[] }
          expect(data.steps.map((s) => s.users), `${timezone} ${JSON.stringify(w)}`).toEqual(funnelUsers(rows, win(timezone, w), steps, windowHours, 'session_id'))
        }
        // A step named twice: the events statement is the reference.
        await both('/insights/{projectId}/funnel', { ...w, timezone, steps: ['session_start', 'screen_view', 'session_start', 'signup'] }, true)
      }
    }
    expect(funnelUsers(rows, win(p.timezone, RECENT), STEPS, 24, 'session_id')[3]).toBeGreaterThan(0)
    const filters = [{ name: 'country', operator: 'is', value: ['SE'] }]
    await both('/insights/{projectId}/funnel', { ...PAST, steps: STEPS, groupBy: 'profile_id', filters }, false)
    await both('/insights/{projectId}/funnel', { ...PAST, steps: STEPS, filters }, false)
  })

  it('funnels per person equal the matcher and the events: links in and out of the window, across C, mixed sessions, events without a session', async () => {
    const LONG = { startDate: '2026-03-01', endDate: '2026-04-15' }
    for (const w of [PAST, RECENT, LONG]) {
      for (const timezone of ZONES) {
        for (const [steps, windowHours] of [[STEPS, 24], [['session_start', 'screen_view', 'signup', 'add_to_cart', 'checkout'], 1], [STEPS, 720]] as const) {
          const query = { ...w, timezone, steps, windowHours, groupBy: 'profile_id' }
          const data = (await both('/insights/{projectId}/funnel', query, true)) as { steps: { users: number }[] }
          expect(data.steps.map((s) => s.users), JSON.stringify(query)).toEqual(funnelUsers(rows, win(timezone, w), steps, windowHours, 'profile_id'))
        }
        // A step named twice, and a second step named as the first: the events statement is the reference.
        await both('/insights/{projectId}/funnel', { ...w, timezone, steps: ['session_start', 'signup', 'session_start', 'add_to_cart'], groupBy: 'profile_id' }, true)
        await both('/insights/{projectId}/funnel', { ...w, timezone, steps: ['signup', 'signup', 'checkout'], groupBy: 'profile_id' }, true)
      }
    }
    // A window that starts after the build's last `linked` episode (04-14 21:37Z with this seed; not in
    // Kolkata) and whose funnel window is within the episodes' gap reads the held people from their
    // snapshot: cand's link is found there.
    const AFTER = { startDate: '2026-04-15', endDate: '2026-04-16' }
    for (const timezone of [...ZONES, 'UTC']) {
      for (const [steps, windowHours] of [[STEPS, 24], [['session_start', 'screen_view', 'signup', 'add_to_cart', 'checkout'], 1]] as const) {
        const query = { ...AFTER, timezone, steps, windowHours, groupBy: 'profile_id' }
        const data = (await both('/insights/{projectId}/funnel', query, true)) as { steps: { users: number }[] }
        expect(data.steps.map((s) => s.users), JSON.stringify(query)).toEqual(funnelUsers(rows, win(timezone, AFTER), steps, windowHours, 'profile_id'))
      }
    }
    const [held] = await rt.runner.rows<{ kinds: number[] }>(
      { name: 'held_kinds', sql: 'SELECT groupUniqArray(kind) AS kinds FROM sealed_live_held WHERE project_id = {project:String}', params: { project: p.id } },
      { timeoutS: 10 },
    )
    expect([...held!.kinds].sort()).toEqual([0, 1, 2])
    expect(funnelUsers(rows.filter((e) => e.device_id === `${p.id}-cand`), win('UTC', AFTER), STEPS, 24, 'profile_id')).toEqual([1, 1, 1, 0])
    // The people above are resolved as the model says: linked across sessions, C, and no session.
    const person = (w: typeof PAST, name: string) => funnelUsers(rows.filter((e) => e.device_id === `${p.id}-${name}`), win('UTC', w), STEPS, 720, 'profile_id')
    expect(person(PAST, 'mix')).toEqual([1, 1, 1, 1])
    expect(person(PAST, 'nos')).toEqual([1, 1, 1, 1])
    expect(person(PAST, 'two')).toEqual([2, 1, 0, 0])
    expect(person(PAST, 'old')).toEqual([1, 1, 0, 0])
    expect(person(RECENT, 'aft')).toEqual([1, 1, 1, 0])
    expect(person(RECENT, 'bef')).toEqual([1, 1, 1, 0])
    const within = (name: string, windowHours: number, devices = [name]) =>
      funnelUsers(rows.filter((e) => devices.some((x) => e.device_id === `${p.id}-${x}`)), win('UTC', PAST), STEPS, windowHours, 'profile_id')
    expect(within('day', 24)).toEqual([1, 1, 0, 0])
    expect(within('late', 24)).toEqual([1, 0, 0, 0])
    expect(within('late', 720)).toEqual([1, 1, 0, 0])
    expect(within('tw', 24, ['tw', 'tw-b'])).toEqual([1, 1, 1, 0])
    expect(within('hash', 24)).toEqual([1, 0, 0, 0])
    const [{ bits } = { bits: [] }] = await rt.runner.rows<{ bits: string[] }>({ name: 'name_bits', sql: `SELECT arrayMap(n -> ${NAME_BIT}, ['x26', 'signup']) AS bits`, params: {} }, { timeoutS: 10 })
    expect(new Set(bits).size).toBe(1)
    const edge = rows.filter((e) => e.device_id === `${p.id}-edge`)
    expect(funnelUsers(edge, win(p.timezone, RECENT), STEPS, 720, 'profile_id')).toEqual([1, 1, 1, 0])
  })

  it('a project without linked episodes: a window starting more than 35 days before C links its held devices as the events do', async () => {
    // The held people's snapshot keeps identified days from C - 35 days on; ear was identified before
    // that, only, and is anonymous after C, beside its person on another device.
    const q = { id: 'pa-held', timezone: 'UTC' }
    await createProject(rt.runner, { id: q.id, name: q.id, timezone: q.timezone, organizationId: 'org-pa' })
    const mine = (at: number, name: string, session: string, who: string, profile = who) => ({ ...row(at, name, session, who, profile), project_id: q.id })
    const held = [
      mine(utc('2026-01-06T09:00:00'), 'screen_view', 'ear-s1', 'ear', 'u-ear'),
      mine(utc('2026-04-14T09:00:00'), 'screen_view', 'other-s1', 'other', 'u-other'),
      mine(utc('2026-04-15T11:30:00'), 'session_start', 'ear-s2', 'ear'),
      mine(utc('2026-04-15T11:35:00'), 'signup', 'ear-s3', 'ear2', 'u-ear'),
    ]
    await rt.engine.client.insert({ table: 'events', values: held, format: 'JSONEachRow' })
    const history = sealedHistory()
    await history.build(q.id)
    const app = testApp(rt, { now: () => NOW, sealed: history })
    const path = `/insights/${q.id}/funnel?startDate=2026-01-05&endDate=2026-04-15&timezone=UTC&steps=session_start&steps=signup&groupBy=profile_id`
    // The first request has the snapshot written; the second could read it.
    await request(app, path)
    await history.snapshotsWritten(q.id)
    const res = await request(app, path)
    expectSealed(res, true)
    const expected = funnelUsers(held, win('UTC', { startDate: '2026-01-05', endDate: '2026-04-15' }), ['session_start', 'signup'], 24, 'profile_id')
    expect(expected).toEqual([1, 1])
    expect(((await res.json()) as { steps: { users: number }[] }).steps.map((s) => s.users)).toEqual(expected)
  })

  it('user flows per session equal the paths and the events in every mode', async () => {
    for (const w of [PAST, RECENT]) {
      for (const timezone of ZONES) {
        const data = (await both('/insights/{projectId}/user_flow', { ...w, timezone, startEvent: 'screen_view', steps: 4 }, true)) as { nodes: { id: string; value: number }[] }
        expect(data.nodes.find((n) => n.id === 'screen_view::step1')?.value ?? 0).toBe(flowPaths(rows, win(timezone, w), 'screen_view', 4).length)
        await both('/insights/{projectId}/user_flow', { ...w, timezone, startEvent: 'signup', mode: 'before', steps: 3 }, true)
        await both('/insights/{projectId}/user_flow', { ...w, timezone, startEvent: 'session_start', endEvent: 'checkout', mode: 'between', steps: 6, exclude: ['screen_view'] }, true)
        await both('/insights/{projectId}/user_flow', { ...w, timezone, startEvent: 'session_start', steps: 5, include: ['signup', 'add_to_cart'] }, true)
      }
    }
    expect(flowPaths(rows, win(p.timezone, PAST), 'screen_view', 4).length).toBeGreaterThan(5)
  })

  it('a late event for a sealed session: the statements merge it exactly (per session and per person), the routes read the events; so after a late event before C', async () => {
    const tie = rows.find((e) => e.session_id === `${p.id}-tie`)!
    const late = row(Date.parse('2026-04-15T11:30:00Z'), 'checkout', tie.session_id, tie.device_id)
    await rt.engine.client.insert({ table: 'events', values: [late], format: 'JSONEachRow' })
    const all = [...rows, late]
    const [latest] = await rt.runner.rows<SealedLatestRow>(sealedLatestStatement([p.id]), { timeoutS: 10 })
    const build = readSealedLatest(latest)!.build
    const steps = ['session_start', 'signup', 'checkout']
    for (const timezone of ZONES) {
      const range = productRange({ startDate: '2026-04-01', endDate: '2026-04-15' }, timezone, NOW, '30d')
      const unit = { projectId: p.id, range, filters: [], groupBy: 'session_id' as const }
      const levels = await rt.runner.rows<{ level: number; units: number }>(sealedFunnel({ ...unit, steps, windowHours: 720 })!(build), { timeoutS: 10 })
      expect(levels).toEqual(await rt.runner.rows(funnelStatement({ ...unit, steps, windowHours: 720 }), { timeoutS: 10 }))
      expect(assembleFunnel(levels, steps).steps.map((s) => s.users)).toEqual(funnelUsers(all, { from: +range.start, to: +range.end, tz: timezone }, steps, 720, 'session_id'))
      const person = { ...unit, groupBy: 'profile_id' as const, steps, windowHours: 720 }
      const personLevels = await rt.runner.rows<{ level: number; units: number }>(sealedFunnel(person)!(build), { timeoutS: 10 })
      expect(personLevels).toEqual(await rt.runner.rows(funnelStatement(person), { timeoutS: 10 }))
      expect(assembleFunnel(personLevels, steps).steps.map((s) => s.users)).toEqual(funnelUsers(all, { from: +range.start, to: +range.end, tz: timezone }, steps, 720, 'profile_id'))
      const flow = { ...unit, startEvent: 'session_start', mode: 'after' as const, steps: 5, include: [], exclude: [] }
      const sorted = (r: FlowRow[]) => [...r].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
      expect(sorted(await rt.runner.rows<FlowRow>(sealedFlow(flow)!(build), { timeoutS: 10 }))).toEqual(sorted(await rt.runner.rows<FlowRow>(flowStatement(flow), { timeoutS: 10 })))
    }
    // The build no longer holds (a sealed session goes on after C): the routes answer from the events.
    await both('/insights/{projectId}/funnel', { startDate: '2026-04-01', endDate: '2026-04-15', steps }, false)
    // A late event before C, of a device anonymous until after C: the routes read the events, and agree with the model.
    const early = row(Date.parse('2026-04-15T10:30:00Z'), 'checkout', `${p.id}-aft-s1`, `${p.id}-aft`)
    await rt.engine.client.insert({ table: 'events', values: [early], format: 'JSONEachRow' })
    const query = { startDate: '2026-04-13', endDate: '2026-04-15', steps: ['session_start', 'signup', 'checkout'], groupBy: 'profile_id' }
    const data = (await both('/insights/{projectId}/funnel', query, false)) as { steps: { users: number }[] }
    expect(data.steps.map((s) => s.users)).toEqual(funnelUsers([...all, early], win(p.timezone, query), query.steps, 24, 'profile_id'))
  })
})

describe('retention, cohorts, active users and engagement from the profile rollups', () => {
  // London is UTC until 29 March, so its winter days are whole UTC days of the rollups and its
  // summer days are made of hours; Stockholm and New York never line up with UTC days; Kolkata's
  // half hours read the events. C is 11:00 UTC: the last day mixes hours and events after C.
  const ZONES = { [PROJECTS.utc.id]: ['UTC', 'Europe/London'], [PROJECTS.sto.id]: ['Europe/London', 'Europe/Stockholm', 'America/New_York'] }
  const SPRING = { startDate: '2026-03-16', endDate: '2026-04-15' }

  it('equal the model in timezones on and off UTC days, across a DST change and C', async () => {
    // The events path is held to the same model by the tests above.
    for (const p of [PROJECTS.utc, PROJECTS.sto]) {
      const rows = events.get(p.id)!
      for (const timezone of ZONES[p.id]!) {
        const at = `${p.id} ${timezone}`
        const path = { projectId: p.id }
        const r = await sealed.GET('/insights/{projectId}/retention', { params: { path, query: { timezone } } })
        expect(r.data, at).toEqual(retention(rows, { from: 0, to: Infinity, tz: timezone }))
        expectSealed(r.response, true)
        const thisWeek = DateTime.fromJSDate(NOW, { zone: timezone }).startOf('week')
        const cw = { from: thisWeek.minus({ weeks: 12 }).toMillis(), to: DateTime.fromJSDate(NOW, { zone: timezone }).startOf('day').plus({ days: 1 }).toMillis(), tz: timezone }
        const c = await sealed.GET('/insights/{projectId}/retention/cohort', { params: { path, query: { timezone } } })
        expect(c.data, at).toEqual(cohorts(rows, cw, NOW.getTime()))
        expectSealed(c.response, true)
        const e = await sealed.GET('/insights/{projectId}/engagement', { params: { path, query: { timezone } } })
        expect(e.data, at).toEqual(engagement(rows, timezone, NOW.getTime()))
        expectSealed(e.response, true)
        for (const days of [7, 30]) {
          const a = await sealed.GET('/insights/{projectId}/active_users', { params: { path, query: { ...SPRING, timezone, days } } })
          expect(a.data!.series, `${at} ${days}`).toEqual(activeUsers(rows, timezone, days, SPRING.startDate, SPRING.endDate, win(timezone, SPRING).to))
          expectSealed(a.response, true)
        }
        const all = await sealed.GET('/insights/{projectId}/active_users', { params: { path, query: { timezone, days: 30 } } })
        const today = DateTime.fromJSDate(NOW, { zone: timezone }).toISODate()!
        expect(all.data!.series, at).toEqual(activeUsers(rows, timezone, 30, firstEventDay(rows, timezone), today, NOW.getTime() + 86_400_000))
      }
    }
    // The rolling windows are not all alike, and someone first seen after C counts.
    const series = activeUsers(events.get(PROJECTS.sto.id)!, 'Europe/London', 7, SPRING.startDate, SPRING.endDate, win('Europe/London', SPRING).to)
    expect(new Set(series.map((s) => s.users)).size).toBeGreaterThan(5)
    expect(events.get(PROJECTS.sto.id)!.some((e) => e.profile_id === `${PROJECTS.sto.id}-ulate`)).toBe(true)
  })

  it('the profiles after C from their snapshot equal the model and the events after C, for windows ending in the hour after C too', async () => {
    // A history that computes the profiles after C per request; `sealed` reads them as the planner wrote them.
    const apps = { snapshot: sealedApp, computed: testApp(rt, { now: () => NOW, sealed: sealedHistory({ liveSnapshots: false }) }) }
    const get = async (history: keyof typeof apps, path: string) => {
      const res = await request(apps[history], path)
      // A request does not wait for the snapshot it starts writing: the explained one after it reads it once written.
      await Promise.all(histories.flatMap((h) => Object.values(PROJECTS).map((p) => h.snapshotsWritten(p.id))))
      const { sql } = (await (await request(apps[history], `${path}&explain=sql`)).json()) as { sql: string[] }
      expect(sql.join('\n').includes('FROM sealed_live_profiles'), `${history} ${path}`).toBe(history === 'snapshot')
      expectSealed(res, true)
      return res.json()
    }
    for (const p of [PROJECTS.utc, PROJECTS.sto]) {
      const rows = events.get(p.id)!
      // 11:10 is before every event after C (11:20 on), 11:30 between them; endDate times are inclusive to the ms.
      for (const end of ['2026-04-15T11:10:00', '2026-04-15T11:30:00', undefined]) {
        const to = end === undefined ? win('UTC', SPRING).to : Date.parse(`${end}Z`) + 1
        const query = `timezone=UTC&days=7&startDate=${SPRING.startDate}&endDate=${end ?? SPRING.endDate}`
        const expected = activeUsers(rows, 'UTC', 7, SPRING.startDate, SPRING.endDate, to)
        for (const history of ['snapshot', 'computed'] as const) {
          expect(((await get(history, `/insights/${p.id}/active_users?${query}`)) as { series: unknown }).series, `${p.id} ${end} ${history}`).toEqual(expected)
        }
      }
      for (const history of ['snapshot', 'computed'] as const) {
        expect(await get(history, `/insights/${p.id}/retention?timezone=UTC`)).toEqual(retention(rows, { from: 0, to: Infinity, tz: 'UTC' }))
        expect(await get(history, `/insights/${p.id}/engagement?timezone=UTC`)).toEqual(engagement(rows, 'UTC', NOW.getTime()))
      }
    }
  })

  it("the dates before C's local day from the build's series, the later ones computed, equal the model for any window, zone and days", async () => {
    const explained = async (path: string) => ((await (await request(sealedApp, `${path}&explain=sql`)).json()) as { sql: string[] }).sql.join('\n')
    for (const p of [PROJECTS.utc, PROJECTS.sto]) {
      const rows = events.get(p.id)!
      for (const timezone of ZONES[p.id]!) {
        const today = DateTime.fromJSDate(NOW, { zone: timezone }).toISODate()!
        const end = (date: string) => DateTime.fromISO(date, { zone: timezone }).plus({ days: 1 }).toMillis()
        for (const days of [1, 7, 30]) {
          // The first request starts the series' write, not waiting for it; once written, every window reads it.
          await request(sealedApp, `/insights/${p.id}/active_users?timezone=${timezone}&days=${days}`)
          await Promise.all(histories.map((h) => h.snapshotsWritten(p.id)))
          const cases = [
            { query: '', first: firstEventDay(rows, timezone), last: today, to: end(today), series: true },
            { query: `&startDate=${SPRING.startDate}&endDate=${SPRING.endDate}`, first: SPRING.startDate, last: SPRING.endDate, to: end(SPRING.endDate), series: true },
            // Before C's day: no date is computed. From C's day on: no series is read.
            { query: `&startDate=${WINDOW.startDate}&endDate=${WINDOW.endDate}`, first: WINDOW.startDate, last: WINDOW.endDate, to: end(WINDOW.endDate), series: true },
            { query: `&startDate=${today}&endDate=${today}`, first: today, last: today, to: end(today), series: false },
            // Ending, in UTC, in the hour after C, among its events (11:20 on).
            { query: '&startDate=2026-04-01&endDate=2026-04-15T11:30:00', first: '2026-04-01', last: '2026-04-15', to: DateTime.fromISO('2026-04-15T11:30:00', { zone: timezone }).toMillis() + 1, series: true },
          ]
          for (const c of cases) {
            const path = `/insights/${p.id}/active_users?timezone=${timezone}&days=${days}${c.query}`
            expect((await explained(path)).includes('FROM sealed_active_users'), path).toBe(c.series)
            const res = await request(sealedApp, path)
            expectSealed(res, true)
            expect(((await res.json()) as { series: unknown }).series, path).toEqual(activeUsers(rows, timezone, days, c.first, c.last, c.to))
          }
        }
      }
    }
    // Caracas was at -04:30 until 2016: a window of whole hours now, but no series over all time.
    const rows = events.get(PROJECTS.utc.id)!
    const res = await request(sealedApp, `/insights/${PROJECTS.utc.id}/active_users?timezone=America/Caracas&days=7&startDate=${SPRING.startDate}&endDate=${SPRING.endDate}`)
    expectSealed(res, true)
    const w = win('America/Caracas', SPRING)
    expect(((await res.json()) as { series: unknown }).series).toEqual(activeUsers(rows, 'America/Caracas', 7, SPRING.startDate, SPRING.endDate, w.to))
  })

  it('a late event before C: the build no longer holds, and the routes answer it from the events', async () => {
    // The last test of the file: the Stockholm project's build is stale after it.
    const p = PROJECTS.sto
    const rows = events.get(p.id)!
    const late = { ...rows[0]!, id: crypto.randomUUID(), created_at: toRow(Date.parse('2026-04-14T09:00:00Z')), device_id: 'late-device', profile_id: 'late-person', session_id: 'late-session' }
    await rt.engine.client.insert({ table: 'events', values: [late], format: 'JSONEachRow' })
    const all = [...rows, late]
    const a = await sealed.GET('/insights/{projectId}/active_users', { params: { path: { projectId: p.id }, query: { ...SPRING, days: 7 } } })
    expect(a.data!.series).toEqual(activeUsers(all, p.timezone, 7, SPRING.startDate, SPRING.endDate, win(p.timezone, SPRING).to))
    expectSealed(a.response, false)
    const e = await sealed.GET('/insights/{projectId}/engagement', { params: { path: { projectId: p.id }, query: {} } })
    expect(e.data).toEqual(engagement(all, p.timezone, NOW.getTime()))
    expect(e.data).not.toEqual(engagement(rows, p.timezone, NOW.getTime()))
  })
})
