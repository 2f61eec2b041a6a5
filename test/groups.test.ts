/**
 * Groups end to end: OpenPanel-shaped events, profiles and groups imported from files; the groups
 * on exported events (NDJSON, Parquet read by DuckDB); group.* filters on the export and charts;
 * the group segment and a group.* breakdown; the sessions' groups; the groups routes through the
 * generated client. Every expected value is computed here from the rows written to the files.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import createClient from 'openapi-fetch'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../src/auth/clients.ts'
import { parseImportArgs } from '../src/cli/import.ts'
import { createResponseCache } from '../src/http/cache/middleware.ts'
import { eventsWatermark } from '../src/http/cache/watermark.ts'
import { importEntities } from '../src/import/entities.ts'
import { toEntityRow } from '../src/import/entity-rows.ts'
import { importFile } from '../src/import/import.ts'
import { RowError, toEventRow } from '../src/import/event-row.ts'
import { createProject } from '../src/projects.ts'
import type { paths } from './generated/quarry-api.js'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'
import { readParquet } from './support/columnar-readers.ts'

const PROJECT = 'grp'
const ORG = 'org-grp'
const NOW = new Date('2026-03-10T12:00:00.000Z')
const DAYS = ['2026-03-01', '2026-03-02', '2026-03-03']
const HOUR = 3_600_000

// Groups as OpenPanel's API shapes them; acme twice (the later write renames it), old deleted below.
const GROUPS = [
  { id: 'acme', type: 'company', name: 'Acme', properties: '{"plan":"trial"}', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-02T00:00:00.000Z' },
  { id: 'acme', type: 'company', name: 'Acme Inc', properties: '{"plan":"pro","seats":"25"}', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-02-01T00:00:00.000Z' },
  { id: 'globex', type: 'company', name: 'Globex', properties: '{"plan":"free"}', createdAt: '2026-01-05T00:00:00.000Z', updatedAt: '2026-01-05T00:00:00.000Z' },
  { id: 'eng', type: 'team', name: 'Engineering', properties: '', createdAt: '2026-01-10T00:00:00.000Z', updatedAt: '2026-01-10T00:00:00.000Z' },
  { id: 'old', type: 'company', name: 'Old Co', properties: '', createdAt: '2026-01-03T00:00:00.000Z', updatedAt: '2026-01-03T00:00:00.000Z' },
]
/** Each group's latest row; old is deleted (a row with deleted = 1 is inserted after the import). */
const LIVE: Record<string, { type: string; name: string; properties: Record<string, string> }> = {
  acme: { type: 'company', name: 'Acme Inc', properties: { plan: 'pro', seats: '25' } },
  globex: { type: 'company', name: 'Globex', properties: { plan: 'free' } },
  eng: { type: 'team', name: 'Engineering', properties: {} },
}

// ghost has no row at all: ids need not exist.
const CHOICES = [[], ['acme'], ['globex'], ['acme', 'eng'], ['ghost'], ['old'], ['eng', 'globex']]

interface Ev {
  id: string
  name: string
  deviceId: string
  profileId: string
  sessionId: string
  createdAt: string
  path: string
  groups: string[]
}
const events: Ev[] = Array.from({ length: 72 }, (_, i) => ({
  id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  name: i % 3 === 0 ? 'click' : 'screen_view',
  deviceId: `d${i % 5}`,
  profileId: i % 4 === 0 ? 'u1' : `d${i % 5}`,
  sessionId: `s${Math.floor(i / 6)}`,
  createdAt: new Date(Date.parse(`${DAYS[0]}T00:30:00.000Z`) + i * HOUR).toISOString(),
  path: `/p${i % 4}`,
  groups: CHOICES[(i * 5 + Math.floor(i / 7)) % CHOICES.length]!,
}))
const dayOf = (e: Ev) => DAYS.indexOf(e.createdAt.slice(0, 10))
const perDay = (count: (day: Ev[]) => number) => DAYS.map((_, d) => count(events.filter((e) => dayOf(e) === d)))
const rowOf = (id: string) => LIVE[id]

const dir = mkdtempSync(join(tmpdir(), 'quarry-groups-'))
let rt: TestRuntime
let app: ReturnType<typeof testApp>
let headers: Record<string, string>
const imported: Record<string, number> = {}

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000' })
  await createProject(rt.runner, { id: PROJECT, name: 'Groups', timezone: 'UTC', organizationId: ORG })
  const client = await createClientRow(rt.runner, { type: 'read', projectId: PROJECT, organizationId: ORG, name: 'grp' })
  headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }

  // OpenPanel's export shape, with keys the importer ignores (profile, meta, projectId).
  const eventsFile = join(dir, 'events.ndjson')
  writeFileSync(eventsFile, events.map((e) => JSON.stringify({ ...e, projectId: 'elsewhere', profile: { id: e.profileId }, meta: null })).join('\n'))
  const groupsFile = join(dir, 'groups.csv')
  const cell = (v: string) => `"${v.replace(/"/g, '""')}"`
  writeFileSync(groupsFile, ['id,type,name,properties,createdAt,updatedAt', ...GROUPS.map((g) => [g.id, g.type, g.name, g.properties, g.createdAt, g.updatedAt].map(cell).join(','))].join('\n'))
  // One raw ClickHouse row (snake_case, flat properties), the others as OpenPanel's API shapes them.
  const profilesFile = join(dir, 'profiles.ndjson')
  writeFileSync(
    profilesFile,
    [
      { id: 'u1', first_name: 'Alice', is_external: true, properties: { 'address.city': 'Stockholm' }, groups: ['acme'], created_at: '2026-02-01 09:00:00.000', last_seen_at: '2026-03-01 10:00:00.000' },
      { id: 'u2', firstName: 'Bob', email: 'b@x.example', isExternal: true, properties: { address: { city: 'Oslo' }, plan: 'x', empty: '' }, groups: ['acme', 'eng'], createdAt: '2026-02-03T09:00:00Z', lastSeenAt: '2026-03-02T10:00:00Z' },
      { id: 'u3', firstName: 'Carol', groups: ['globex'], createdAt: '2026-02-02T09:00:00Z' },
      { id: 'u4', firstName: 'Dan', createdAt: '2026-02-04T09:00:00Z' },
    ]
      .map((p) => JSON.stringify(p))
      .join('\n'),
  )
  const opts = { projectId: PROJECT, onError: 'abort' as const, now: NOW }
  imported.events = (await importFile(rt.engine, eventsFile, { ...opts, format: 'ndjson' })).imported
  imported.groups = (await importEntities(rt.engine, 'groups', groupsFile, { ...opts, format: 'csv' })).imported
  imported.profiles = (await importEntities(rt.engine, 'profiles', profilesFile, { ...opts, format: 'ndjson' })).imported
  // A second import of the same files adds nothing anyone reads.
  imported.again = (await importFile(rt.engine, eventsFile, { ...opts, format: 'ndjson' })).imported
  await importEntities(rt.engine, 'groups', groupsFile, { ...opts, format: 'csv' })
  await rt.engine.client.insert({
    table: 'groups',
    values: [{ id: 'old', project_id: PROJECT, type: 'company', name: 'Old Co', properties: {}, created_at: '2026-01-03 00:00:00.000', version: Date.parse('2026-01-04T00:00:00Z'), deleted: 1 }],
    format: 'JSONEachRow',
  })
  app = testApp(rt, { now: () => NOW })
}, 60_000)

afterAll(async () => {
  await rt?.dispose()
  rmSync(dir, { recursive: true, force: true })
})

const get = (path: string) => app.request(path, { headers })
const json = async (path: string) => {
  const res = await get(path)
  const body = await res.text()
  expect(res.status, body.slice(0, 300)).toBe(200)
  return JSON.parse(body)
}
const q = (params: Record<string, unknown>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString()
const WINDOW = { start: DAYS[0]!, end: DAYS[2]! }
const newestFirst = [...events].sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1))

describe('import', () => {
  it('keeps the events groups and loads OpenPanel profiles and groups; a file again adds no event', () => {
    expect(imported).toEqual({ events: events.length, groups: GROUPS.length, profiles: 4, again: 0 })
  })

  it('reads a list as JSON, JSON text or ClickHouse text; refuses what is no list of ids', () => {
    const ctx = { projectId: PROJECT, importedAt: '2026-03-10 00:00:00' }
    const base = { name: 'n', createdAt: '2026-03-01T00:00:00Z' }
    expect(toEventRow({ ...base, groups: ['a', 7] }, ctx).groups).toEqual(['a', '7'])
    expect(toEventRow({ ...base, groups: '["a","b"]' }, ctx).groups).toEqual(['a', 'b'])
    expect(toEventRow({ ...base, groups: "['a','b\\'c']" }, ctx).groups).toEqual(['a', "b'c"])
    expect(toEventRow({ ...base, groups: '' }, ctx).groups).toEqual([])
    for (const groups of [[''], [{}], 'a,b', { a: 1 }]) expect(() => toEventRow({ ...base, groups }, ctx), JSON.stringify(groups)).toThrow(RowError)
    expect(() => toEntityRow('groups', { id: 'x', type: 'company' }, { projectId: PROJECT, now: 0 })).toThrow(/name: required/)
    expect(() => toEntityRow('profiles', { id: 'x', isExternal: 'maybe' }, { projectId: PROJECT, now: 0 })).toThrow(/is_external\/isExternal/)
    expect(() => parseImportArgs(['--project', 'p', '--table', 'cohorts', 'f.ndjson'])).toThrow(/--table must be one of events, profiles, groups/)
  })

  it("loads Parquet files of OpenPanel's groups and profiles tables to the same rows", async () => {
    const copy = 'grp-parquet'
    const opts = { projectId: copy, onError: 'abort' as const, now: NOW, format: 'parquet' as const }
    for (const table of ['groups', 'profiles'] as const) {
      const path = join(dir, `${table}.parquet`)
      await rt.engine.client.command({
        query: `INSERT INTO FUNCTION file({path:String}, Parquet) SELECT * FROM ${table} FINAL WHERE project_id = {p:String}`,
        query_params: { path, p: PROJECT },
      })
      await importEntities(rt.engine, table, path, opts)
    }
    const read = (sql: string) => rt.runner.rows<Record<string, unknown>>({ name: 'test', sql, params: { p: copy } }, { timeoutS: 30 })
    const groups = await read('SELECT id, type, name, properties, toString(created_at) AS created_at, version FROM groups FINAL WHERE project_id = {p:String} ORDER BY id')
    const latest = (id: string) => GROUPS.filter((g) => g.id === id).at(-1)!
    expect(groups).toEqual(
      Object.keys(LIVE)
        .sort()
        .map((id) => ({ id, ...LIVE[id], created_at: latest(id).createdAt.replace('T', ' ').replace('Z', ''), version: Date.parse(latest(id).updatedAt) })),
    )
    const profiles = await read('SELECT id, first_name, groups, properties FROM profiles FINAL WHERE project_id = {p:String} ORDER BY id')
    expect(profiles).toEqual([
      { id: 'u1', first_name: 'Alice', groups: ['acme'], properties: { 'address.city': 'Stockholm' } },
      { id: 'u2', first_name: 'Bob', groups: ['acme', 'eng'], properties: { 'address.city': 'Oslo', plan: 'x' } },
      { id: 'u3', first_name: 'Carol', groups: ['globex'], properties: {} },
      { id: 'u4', first_name: 'Dan', groups: [], properties: {} },
    ])
  })

  it('gives each session the union of its events groups', async () => {
    const rows = await rt.runner.rows<{ id: string; sorted: string[] }>(
      { name: 'test', sql: `SELECT id, arraySort(groups) AS sorted FROM sessions FINAL WHERE project_id = {p:String} ORDER BY id`, params: { p: PROJECT } },
      { timeoutS: 30 },
    )
    const want = new Map<string, Set<string>>()
    for (const e of events) for (const g of e.groups) want.set(e.sessionId, (want.get(e.sessionId) ?? new Set()).add(g))
    const sessions = [...new Set(events.map((e) => e.sessionId))].sort()
    expect(rows).toEqual(sessions.map((id) => ({ id, sorted: [...(want.get(id) ?? [])].sort() })))
  })
})

describe('/export/events', () => {
  it('has the groups of every event, [] when none, with or without includes=groups (NDJSON)', async () => {
    for (const includes of [undefined, 'groups', 'groups,properties']) {
      const res = await get(`/export/events?${q({ ...WINDOW, format: 'ndjson', ...(includes ? { includes } : {}) })}`)
      expect(res.status).toBe(200)
      // groups is a field every event has: naming it changes nothing, and the answer says so.
      expect(res.headers.get('X-Quarry-Ignored') ?? '').toMatch(includes ? /includes/ : /^$/)
      const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as { id: string; groups: string[] })
      expect(lines.map((l) => [l.id, l.groups])).toEqual(newestFirst.map((e) => [e.id, e.groups]))
    }
  })

  it('Parquet: groups is a list of strings that DuckDB reads back as the NDJSON has it', async () => {
    const res = await get(`/export/events?${q({ ...WINDOW, format: 'parquet', includes: 'groups' })}`)
    expect(res.status).toBe(200)
    const read = await readParquet(new Uint8Array(await res.arrayBuffer()))
    expect(read.types.groups).toBe('VARCHAR[]')
    expect(read.rows.map((r) => [r.id, r.groups])).toEqual(newestFirst.map((e) => [e.id, e.groups]))
  })

  it('group.* filters keep the events with a matching group, once each (the group row latest, deleted left out)', async () => {
    const cases: [unknown, (e: Ev) => boolean][] = [
      [{ name: 'group.name', operator: 'is', value: ['Acme Inc'] }, (e) => e.groups.some((g) => rowOf(g)?.name === 'Acme Inc')],
      [{ name: 'group.name', operator: 'is', value: ['Acme'] }, () => false],
      [{ name: 'group.type', operator: 'is', value: ['company'] }, (e) => e.groups.some((g) => rowOf(g)?.type === 'company')],
      [{ name: 'group.properties.plan', operator: 'startsWith', value: ['fr'] }, (e) => e.groups.some((g) => rowOf(g)?.properties.plan?.startsWith('fr'))],
      [{ name: 'group.id', operator: 'isNot', value: ['acme'] }, (e) => e.groups.some((g) => g !== 'acme')],
      [{ name: 'group.id', operator: 'is', value: ['ghost', 'old'] }, (e) => e.groups.some((g) => g === 'ghost' || g === 'old')],
    ]
    for (const [filter, keep] of cases) {
      const body = await json(`/export/events?${q({ ...WINDOW, limit: '1000', filters: [filter] })}`)
      const want = newestFirst.filter(keep).map((e) => e.id)
      expect({ filter, ids: body.data.map((d: { id: string }) => d.id), total: body.meta.totalCount }).toEqual({ filter, ids: want, total: want.length })
    }
  })
})

describe('/export/charts', () => {
  const chart = (params: Record<string, unknown>) =>
    json(`/export/charts?${q({ startDate: DAYS[0], endDate: DAYS[2], interval: 'day', projectId: PROJECT, ...params })}`)
  const counts = (series: { data: { count: number }[] }) => series.data.map((d) => d.count)

  it('the group segment counts distinct group ids per bucket, known or not', async () => {
    const body = await chart({ series: [{ name: '*', segment: 'group' }] })
    expect(counts(body.series[0])).toEqual(perDay((day) => new Set(day.flatMap((e) => e.groups)).size))
    const clicks = await chart({ series: [{ name: 'click', segment: 'group' }] })
    expect(counts(clicks.series[0])).toEqual(perDay((day) => new Set(day.filter((e) => e.name === 'click').flatMap((e) => e.groups)).size))
  })

  it('a group.name breakdown counts an event in each of its groups; an id without a (live) row reads ""', async () => {
    const body = await chart({ series: [{ name: 'screen_view' }], breakdowns: [{ name: 'group.name' }] })
    const want = new Map<string, number[]>()
    for (const e of events.filter((x) => x.name === 'screen_view')) {
      for (const g of e.groups) {
        const label = rowOf(g)?.name ?? ''
        const row = want.get(label) ?? [0, 0, 0]
        row[dayOf(e)]!++
        want.set(label, row)
      }
    }
    const got = new Map<string, number[]>(body.series.map((s: { event: { breakdowns: Record<string, string> }; data: { count: number }[] }) => [s.event.breakdowns['group.name']!, counts(s)]))
    expect(got).toEqual(want)
  })

  it('a group.* series filter counts each matching event once', async () => {
    const filters = [{ name: 'group.type', operator: 'is', value: ['team'] }]
    const body = await chart({ series: [{ name: '*', filters }] })
    expect(counts(body.series[0])).toEqual(perDay((day) => day.filter((e) => e.groups.some((g) => rowOf(g)?.type === 'team')).length))
  })

  it('a group.properties.* property sums and takes the max over the groups of each event, those without a number left out', async () => {
    // OpenPanel's ARRAY JOIN: an event counts once per group it carries, with that group's value.
    const values = (day: Ev[]) =>
      day.flatMap((e) => e.groups.map((g) => Number(rowOf(g)?.properties.seats ?? NaN))).filter((v) => Number.isFinite(v))
    const sum = await chart({ series: [{ name: '*', segment: 'property_sum', property: 'group.properties.seats' }] })
    expect(counts(sum.series[0])).toEqual(perDay((day) => values(day).reduce((a, b) => a + b, 0)))
    expect(counts(sum.series[0]).some((c) => c > 0)).toBe(true)
    const max = await chart({ series: [{ name: '*', segment: 'property_max', property: 'group.properties.seats' }] })
    expect(counts(max.series[0])).toEqual(perDay((day) => (values(day).length > 0 ? Math.max(...values(day)) : 0)))
  })

  it('bad group names and segments are a 400 naming them', async () => {
    for (const params of [{ breakdowns: [{ name: 'group.' }] }, { series: [{ name: '*', segment: 'groups' }] }]) {
      const res = await get(`/export/charts?${q({ projectId: PROJECT, series: [{ name: '*' }], ...params })}`)
      expect(res.status).toBe(400)
      expect((await res.json()).code).toBe('invalid_parameters')
    }
  })
})

describe('insights', () => {
  it('a group.* filter keeps the sessions with an event in a matching group', async () => {
    const filters = [{ name: 'group.type', operator: 'is', value: ['team'] }]
    const body = await json(`/insights/${PROJECT}/metrics?${q({ startDate: DAYS[0], endDate: DAYS[2], filters })}`)
    const sessions = new Set(events.filter((e) => e.groups.some((g) => rowOf(g)?.type === 'team')).map((e) => e.sessionId))
    expect(sessions.size).toBeGreaterThan(0)
    expect(body.metrics.total_sessions).toBe(sessions.size)
  })
})

describe('the groups routes (generated client)', () => {
  const quarry = () => createClient<paths>({ baseUrl: 'http://quarry.test', fetch: async (req) => app.fetch(req), headers })
  const path = { projectId: PROJECT }

  it('groups/types: the types of the live groups', async () => {
    const { data } = await quarry().GET('/insights/{projectId}/groups/types', { params: { path } })
    expect(data).toEqual({ types: [...new Set(Object.values(LIVE).map((g) => g.type))].sort() })
  })

  it('groups: newest first, by type, by search, limited', async () => {
    const iso = (id: string) => GROUPS.filter((g) => g.id === id).at(-1)!
    const object = (id: string) => ({ id, projectId: PROJECT, ...LIVE[id], createdAt: iso(id).createdAt, updatedAt: iso(id).updatedAt })
    const newest = Object.keys(LIVE).sort((a, b) => (iso(a).createdAt < iso(b).createdAt ? 1 : -1))
    const list = async (query: { type?: string; search?: string; limit?: number }) =>
      (await quarry().GET('/insights/{projectId}/groups', { params: { path, query } })).data
    expect(await list({})).toEqual(newest.map(object))
    expect(await list({ type: 'company' })).toEqual(newest.filter((id) => LIVE[id]!.type === 'company').map(object))
    expect(await list({ search: 'ACME' })).toEqual([object('acme')])
    expect(await list({ search: 'lob' })).toEqual([object('globex')])
    expect(await list({ limit: 1 })).toEqual([object(newest[0]!)])
  })

  it('groups/{groupId}: the group, its member count and its newest members, nested properties', async () => {
    const { data } = await quarry().GET('/insights/{projectId}/groups/{groupId}', { params: { path: { ...path, groupId: 'acme' }, query: { memberLimit: 1 } } })
    expect(data?.group).toMatchObject({ id: 'acme', name: 'Acme Inc', updatedAt: '2026-02-01T00:00:00.000Z' })
    expect(data?.member_count).toBe(2)
    expect(data?.members).toEqual([
      {
        id: 'u2', firstName: 'Bob', lastName: '', email: 'b@x.example', avatar: '', isExternal: true,
        properties: { address: { city: 'Oslo' }, plan: 'x' }, createdAt: '2026-02-03T09:00:00.000Z', lastSeenAt: '2026-03-02T10:00:00.000Z',
        projectId: PROJECT, groups: ['acme', 'eng'],
      },
    ])
    const eng = await quarry().GET('/insights/{projectId}/groups/{groupId}', { params: { path: { ...path, groupId: 'eng' } } })
    expect(eng.data?.members.map((m) => m.id)).toEqual(['u2'])
  })

  it('an unknown or deleted group is a 404; bad parameters a 400', async () => {
    for (const groupId of ['nope', 'old', 'ghost']) {
      const { error, response } = await quarry().GET('/insights/{projectId}/groups/{groupId}', { params: { path: { ...path, groupId } } })
      expect([groupId, response.status, error?.code]).toEqual([groupId, 404, 'group_not_found'])
    }
    for (const bad of ['groups?limit=0', 'groups?limit=101', 'groups/acme?memberLimit=51', 'groups?sort=name', 'groups/types?x=1']) {
      const res = await get(`/insights/${PROJECT}/${bad}`)
      expect([bad, res.status, (await res.json()).code]).toEqual([bad, 400, 'invalid_parameters'])
    }
  })
})

// Last: it renames a group.
describe('the response cache', () => {
  it('retires a cached chart when a group is written', async () => {
    const cache = createResponseCache({ now: () => NOW, watermark: eventsWatermark(rt.runner) }, { watermarkTtlMs: 0 })
    const cached = testApp(rt, { now: () => NOW, responseCache: cache })
    const url = `/export/charts?${q({ startDate: DAYS[0], endDate: DAYS[2], projectId: PROJECT, series: [{ name: '*' }], breakdowns: [{ name: 'group.name' }] })}`
    const labels = async (want: string) => {
      const res = await cached.request(url, { headers })
      expect(res.headers.get('X-Quarry-Cache')).toBe(want)
      return (await res.json()).series.map((s: { event: { breakdowns: Record<string, string> } }) => s.event.breakdowns['group.name']).sort()
    }
    expect(await labels('miss')).toContain('Globex')
    expect(await labels('hit')).toContain('Globex')
    await rt.engine.client.insert({
      table: 'groups',
      values: [{ id: 'globex', project_id: PROJECT, type: 'company', name: 'Globex Corp', properties: { plan: 'free' }, created_at: '2026-01-05 00:00:00.000', version: Date.parse('2026-03-01T00:00:00Z') }],
      format: 'JSONEachRow',
    })
    const after = await labels('miss')
    expect(after).toContain('Globex Corp')
    expect(after).not.toContain('Globex')
  })
})
