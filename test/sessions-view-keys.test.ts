import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadMigrations } from '../src/clickhouse/migrate.ts'
import { openTestRuntime, type TestRuntime } from './helpers/runtime.ts'

// Migration 031 replaces 019's `min(tuple)` aggregates of the sessions view with `min` over byte
// keys. Every row must be the one 019's view gives for the same events, including where the keys
// could go wrong: equal times (each attribute takes its smallest value on its own), values that
// are prefixes of each other or hold 0x00 bytes (the origin's escape), times before 1970 (the
// flipped sign bit) and the entry and exit sentinels (sessions without a page view, page views
// past the entry sentinel or before the exit one).

interface Event {
  session_id: string
  name?: string
  created_at: string
  origin?: string
  path?: string
  profile_id?: string
  device_id?: string
  country?: string
  city?: string
  referrer?: string
  utm_source?: string
  groups?: string[]
}

const T = '2026-01-05 10:00:00.000'
const events: Event[] = [
  // Ties at the first time: each attribute's smallest value, from different events.
  { session_id: 'tie', created_at: T, origin: 'https://b', path: '/x', profile_id: 'u2', device_id: 'd1', country: 'SE', city: 'b', utm_source: 'z', groups: ['g1'] },
  { session_id: 'tie', created_at: T, origin: 'https://a', path: '/y', profile_id: 'u3', device_id: 'd2', country: 'NO', city: 'a', utm_source: 'y', groups: ['g2'] },
  { session_id: 'tie', name: 'search', created_at: T, origin: 'https://0', path: '/0', profile_id: 'u1', device_id: 'd3', country: 'DK', city: '' },
  { session_id: 'tie', created_at: '2026-01-05 10:00:01.000', origin: 'https://a', path: '/z', profile_id: 'u0', country: 'AA' },
  { session_id: 'tie', created_at: '2026-01-05 10:00:01.000', origin: 'https://a', path: '/a', profile_id: 'u0', country: 'AA' },
  // 0x00 bytes and prefixes in origins, paths and attributes, before 1970.
  { session_id: 'nul', created_at: '1960-05-01 00:00:00.000', origin: 'o\0x', path: 'p1', profile_id: 'u', country: 'SE' },
  { session_id: 'nul', created_at: '1960-05-01 00:00:00.000', origin: 'o', path: 'p2', profile_id: 'a', country: 'SE\0' },
  { session_id: 'nul', created_at: '1960-05-01 00:00:00.000', origin: 'o\0', path: 'p0', profile_id: 'b', country: 'SE' },
  { session_id: 'nul', created_at: '1960-05-01 00:00:00.000', origin: 'o\0\u0001', path: '', profile_id: 'c', country: 'S' },
  { session_id: 'nul2', created_at: '2026-02-01 00:00:00.001', origin: 'o\0\0\u0001', path: 'p\0\0', country: '\u00ff' },
  { session_id: 'nul2', created_at: '2026-02-01 00:00:00.001', origin: 'o\0\0', path: 'p\0\0\0', country: '\u0001' },
  { session_id: 'nul2', created_at: '2026-02-01 00:00:00.001', origin: 'o\0\0', path: 'p\0\0', country: '' },
  { session_id: 'nul2', created_at: '1970-01-01 00:00:00.000', origin: 'o\0', path: '\0' },
  // Across 1970: the negative time must sort first.
  { session_id: 'epoch', created_at: '1970-01-01 00:00:00.001', origin: 'a', path: '/after', country: 'A', profile_id: 'a' },
  { session_id: 'epoch', created_at: '1969-12-31 23:59:59.999', origin: 'z', path: '/before', country: 'Z', profile_id: 'z' },
  // No page view: both sentinels.
  { session_id: 'custom', name: 'revenue', created_at: T, origin: 'o', path: 'p', profile_id: 'u' },
  { session_id: 'custom', name: 'signup', created_at: T, origin: 'o\0\0', path: 'p', profile_id: 'v' },
  // A custom event carries the sentinels beside page views past the entry one and before the exit one.
  { session_id: 'edges', name: 'search', created_at: '1969-12-31 23:59:59.999', origin: 'o', path: '/custom' },
  { session_id: 'edges', created_at: '2299-12-31 23:00:00.000', origin: 'o', path: '/late' },
  { session_id: 'edges2', name: 'search', created_at: '1969-12-31 23:59:59.999', origin: 'o', path: '/custom' },
  { session_id: 'edges2', created_at: '1900-01-01 00:00:00.000', origin: 'o', path: '/old' },
  { session_id: 'edges2', created_at: '1969-06-01 00:00:00.000', origin: 'o', path: '/neg', referrer: 'r' },
]

const row = (project: string) => (e: Event) => ({
  project_id: project,
  name: e.name ?? 'screen_view',
  session_id: e.session_id,
  created_at: e.created_at,
  origin: e.origin ?? '',
  path: e.path ?? '',
  profile_id: e.profile_id ?? 'p',
  device_id: e.device_id ?? 'd',
  country: e.country ?? '',
  city: e.city ?? '',
  referrer: e.referrer ?? '',
  properties: e.utm_source === undefined ? {} : { '__query.utm_source': e.utm_source },
  groups: e.groups ?? [],
})

/** 019's view, the definition before 031, over `source` instead of `events`. */
function view019(source: string): { create: string; select: string } {
  const statements = loadMigrations().find((m) => m.version === '019_groups')!.statements
  const create = statements.find((s) => s.startsWith('CREATE MATERIALIZED VIEW'))!
  return { create, select: create.slice(create.indexOf('SELECT')).replace(/\bFROM events\b/, `FROM ${source}`) }
}

const FIRST = ['profile_id', 'device_id', 'referrer', 'referrer_name', 'referrer_type', 'utm_source', 'utm_medium',
  'utm_campaign', 'utm_term', 'utm_content', 'country', 'region', 'city', 'device', 'brand', 'model', 'browser',
  'browser_version', 'os', 'os_version'].map((a) => `toString(first_${a}) AS first_${a}`)
// Every stored column of `sessions` as text, groups sorted (their order is not part of a session).
const AS_TEXT = `project_id, id, toString(created_at) AS created_at, toString(ended_at) AS ended_at, ${FIRST.join(', ')},
  toString(entry) AS entry, toString(exit) AS exit, screen_view_count, event_count, revenue,
  toString(arraySort(groups)) AS groups`

let rt: TestRuntime

// chDB 26.7 JIT-compiles an aggregate once it has run a few times, and its compiled `min` and `max`
// over DateTime64 put times before 1970 after later ones. Both views share min(t) and max(t), so
// here neither the views nor the reference are compiled: this file checks the keys, not the JIT.
const NO_JIT = 'SETTINGS compile_aggregate_expressions = 0'
const insert = (project: string, batch: Event[]) =>
  rt.engine.client.command({
    query: `INSERT INTO events ${NO_JIT} FORMAT JSONEachRow\n${batch.map((e) => JSON.stringify(row(project)(e))).join('\n')}`,
  })
const text = (sql: string) => rt.runner.rows<Record<string, unknown>>({ name: 'keys', sql, params: {} }, { timeoutS: 10 })
const stored = (project: string) => text(`SELECT ${AS_TEXT} FROM sessions FINAL WHERE project_id = '${project}' ORDER BY id`)
const expected = (project: string) =>
  text(`SELECT ${AS_TEXT} FROM (${view019(`(SELECT * FROM events WHERE project_id = '${project}')`).select}) ORDER BY id ${NO_JIT}`)
const odd = events.filter((_, i) => i % 2 === 1)
const even = events.filter((_, i) => i % 2 === 0)

beforeAll(async () => {
  rt = await openTestRuntime()
})

afterAll(async () => {
  await rt?.dispose()
})

describe('the sessions view of 031', () => {
  it("derives 019's rows from events inserted in one block", async () => {
    await insert('one', events)
    const rows = await stored('one')
    expect(rows.map((r) => r.id)).toEqual(['custom', 'edges', 'edges2', 'epoch', 'nul', 'nul2', 'tie'])
    expect(rows).toEqual(await expected('one'))
  })

  it("derives 019's rows from events inserted in two blocks", async () => {
    // Odd events first, then even ones: every session with more than one event spans both.
    await insert('two', odd)
    await insert('two', even)
    expect(await stored('two')).toEqual(await expected('two'))
  })

  it("combines, in an existing database, the rows 019's view stored with the ones 031's adds", async () => {
    await rt.engine.client.command({ query: 'DROP VIEW sessions_mv' })
    await rt.engine.client.command({ query: view019('events').create })
    await insert('old', even)
    for (const statement of loadMigrations().find((m) => m.version.startsWith('031_'))!.statements) {
      await rt.engine.client.command({ query: statement })
    }
    await insert('old', odd)
    expect(await stored('old')).toEqual(await expected('old'))
  })
})
