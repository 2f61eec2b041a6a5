/**
 * What a build keeps of each session's keys and times (src/services/sealed/builder.ts): only requests
 * that extend a session past C read its visitor's key and its entry's and exit's times, so those are
 * kept for the sessions that span C alone (0 on the others); and the page keys sealed_crossing checks
 * are kept only for the sessions its count of the sealed sessions does not cover: those that span C,
 * and the events without a session. Expected sets are computed from the inserted rows; the answers
 * themselves are the other sealed tests'. And each session's number (`sno`): a UTC day's sessions a
 * run after the day before's, in the order of their keys, so that two builds of the same rows number
 * them alike. The keys of the sessions sealed whole, which sealed_crossing looks up; and each table
 * holding the build in one part.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventMaker, PROJECTS } from './fixtures/insights-data.ts'
import { openInsights, type Harness } from './fixtures/insights-harness.ts'
import { ms, type EventRow } from './fixtures/insights-model.ts'

const U = PROJECTS.utc.id
/** C at the pinned clock (22:37 UTC on 14 April): the last start of an hour over an hour old. */
const C = Date.parse('2026-04-14T21:00:00Z')
const extra = eventMaker(600_000, { origin: 'https://example.com', path: '/keys/a' })

let h: Harness
let version: number
/** Project U's session ids with events before C, and those of them with events from C on too. */
let before: Set<string>
let spanning: string[]
/** Project U's sessions with events before C: each one's first event's time. */
let firstAt: Map<string, number>

beforeAll(async () => {
  h = await openInsights({ sealed: true })
  const seams: EventRow[] = [
    extra('keys-span', 'keys-p1', '2026-04-14T20:30:00Z'),
    extra('keys-span', 'keys-p1', '2026-04-14T21:30:00Z', { name: 'click', path: '', origin: '' }),
    extra('keys-whole', 'keys-p2', '2026-04-13T10:00:00Z'),
  ]
  await h.rt.engine.client.insert({ table: 'events', values: seams, format: 'JSONEachRow' })
  const events = [...h.data.events, ...seams].filter((e) => e.project_id === U)
  before = new Set(events.filter((e) => ms(e) < C).map((e) => e.session_id))
  const after = new Set(events.filter((e) => ms(e) >= C).map((e) => e.session_id))
  spanning = [...before].filter((id) => id !== '' && after.has(id)).sort()
  firstAt = new Map()
  for (const e of events) if (e.session_id !== '' && before.has(e.session_id)) firstAt.set(e.session_id, Math.min(firstAt.get(e.session_id) ?? Infinity, ms(e)))
  await h.sealed!.build(U)
  const [row] = await rows<{ version: number }>('SELECT max(version) AS version FROM sealed_builds WHERE project_id = {p:String}')
  version = row!.version
})
afterAll(async () => {
  await h?.dispose()
})

async function rows<T>(sql: string, params: Record<string, unknown> = {}): Promise<T[]> {
  return h.rt.runner.rows<T>({ name: 'keys', sql, params: { p: U, v: version, ...params } }, { timeoutS: 10 })
}

/** The ids of the project's sessions (and '' for the events without one) whose key is among `keys`' rows. */
async function idsKeyed(keys: string): Promise<string[]> {
  const found = await rows<{ id: string }>(
    `SELECT id FROM (SELECT arrayJoin({ids:Array(String)}) AS id) WHERE reinterpretAsUInt128(sipHash128(id)) IN (${keys}) ORDER BY id`,
    { ids: [...before] },
  )
  return found.map((r) => r.id)
}

describe('a build keys only what requests look up', () => {
  it('the fixture has sessions on both sides of C, sealed whole, and events without a session before C', () => {
    expect(spanning).toContain('keys-span')
    expect(before.has('keys-whole')).toBe(true)
    expect(before.has('')).toBe(true)
  })

  it("sealed sessions: a visitor's key and entry and exit times on the held ones alone", async () => {
    const keyed = `SELECT session_key FROM sealed_sessions WHERE project_id = {p:String} AND version = {v:UInt64}
        AND (profile_key != 0 OR toUnixTimestamp64Milli(entry_at) != 0 OR toUnixTimestamp64Milli(exit_at) != 0)`
    expect(await idsKeyed(keyed)).toEqual(spanning)
    expect(await idsKeyed(`${keyed} AND held`)).toEqual(spanning)
    const [{ n } = { n: -1 }] = await rows<{ n: number }>(`SELECT count() AS n FROM (${keyed})`)
    expect(n).toBe(spanning.length)
  })

  it('page keys: the sessions that span C and the events without a session, once each', async () => {
    const [{ n } = { n: -1 }] = await rows<{ n: number }>('SELECT count() AS n FROM sealed_page_keys WHERE project_id = {p:String} AND version = {v:UInt64}')
    expect(n).toBe(spanning.length + 1)
    expect(await idsKeyed('SELECT key FROM sealed_page_keys WHERE project_id = {p:String} AND version = {v:UInt64}')).toEqual(['', ...spanning])
  })

  it('session keys for the crossing check: every session with events before C and none from C on, once each', async () => {
    const whole = [...before].filter((id) => id !== '' && !spanning.includes(id)).sort()
    expect(whole.length).toBeGreaterThan(0)
    const keys = 'SELECT session_key FROM sealed_session_keys WHERE project_id = {p:String} AND version = {v:UInt64}'
    const [{ n } = { n: -1 }] = await rows<{ n: number }>(`SELECT count() AS n FROM (${keys})`)
    expect(n).toBe(whole.length)
    expect(await idsKeyed(keys)).toEqual(whole)
  })
})

describe("a build's tables", () => {
  it('hold the build in one part each: the tables its steps wrote in several parts are compacted', async () => {
    // Every sealed table with builds in it, found in the engine's catalogue rather than the builder's lists.
    const tables = await rows<{ name: string }>(
      `SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 'sealed\\_%' AND engine = 'MergeTree'
         AND name IN (SELECT table FROM system.columns WHERE database = currentDatabase() AND name = 'version') ORDER BY name`,
    )
    expect(tables.length).toBeGreaterThan(20)
    const parts: Record<string, number> = {}
    for (const { name } of tables) {
      const [{ n } = { n: -1 }] = await rows<{ n: number }>(`SELECT uniqExact(_part) AS n FROM ${name} WHERE project_id = {p:String} AND version = {v:UInt64}`)
      parts[name] = n
    }
    expect(Object.entries(parts).filter(([, n]) => n > 1)).toEqual([])
    expect(parts.sealed_rollups).toBe(1)
  })
})

describe('a build numbers its sessions', () => {
  it("by the UTC day of their first event, then by their key: 1 to n, the same on every build", async () => {
    const keyed = await rows<{ id: string; key: string }>(
      'SELECT id, toString(reinterpretAsUInt128(sipHash128(id))) AS key FROM (SELECT arrayJoin({ids:Array(String)}) AS id)',
      { ids: [...firstAt.keys()] },
    )
    const day = (id: string) => Math.floor(firstAt.get(id)! / 86_400_000)
    const order = keyed.sort((a, b) => day(a.id) - day(b.id) || (BigInt(a.key) < BigInt(b.key) ? -1 : 1)).map((r) => r.key)
    const numbered = await rows<{ key: string; sno: number }>(
      'SELECT toString(session_key) AS key, sno FROM sealed_sessions WHERE project_id = {p:String} AND version = {v:UInt64} ORDER BY sno',
    )
    expect(numbered.map((r) => r.sno)).toEqual(order.map((_, i) => i + 1))
    expect(numbered.map((r) => r.key)).toEqual(order)
  })
})
