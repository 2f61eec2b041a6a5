import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { DateTime } from 'luxon'
import createClient from 'openapi-fetch'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../src/auth/clients.ts'
import { createProject } from '../src/projects.ts'
import type { paths } from './generated/quarry-api.js'
import type { EventRow } from './helpers/event-row.ts'
import { seededRandom } from './helpers/random.ts'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'
import { readArrowStream, readParquet, readParquetFile, type ReadBack } from './support/columnar-readers.ts'

// Parquet and Arrow exports read back by independent readers (DuckDB, apache-arrow), against the
// rows this file inserts (expected values in plain TypeScript) and the NDJSON export of the same request.

const PROJECT = 'col'
const OTHER = 'col-other'
const ORG = 'org-col'
const NOW = DateTime.fromISO('2026-03-10T12:00:00.000Z', { zone: 'UTC' })
const START = '2026-02-20'
const END = '2026-03-09'
const FROM = DateTime.fromISO(START, { zone: 'UTC' })
const TO = DateTime.fromISO(END, { zone: 'UTC' }).plus({ days: 1 })

type Row = EventRow & { imported_at: string | null }
const chInstant = (t: DateTime) => t.toUTC().toFormat('yyyy-LL-dd HH:mm:ss.SSS')
const instantOf = (r: Row) => DateTime.fromFormat(r.created_at, 'yyyy-LL-dd HH:mm:ss.SSS', { zone: 'UTC' })
/** ClickHouse orders UUIDs by their second 64-bit half first, then the first. */
const uuidKey = (id: string) => id.replace(/-/g, '').slice(16) + id.replace(/-/g, '').slice(0, 16)
const exportOrder = (a: Row, b: Row) =>
  a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : uuidKey(a.id) < uuidKey(b.id) ? -1 : 1

const rows: Row[] = []
function generate() {
  const rnd = seededRandom(22)
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rnd() * 16).toString(16)).join('')
  // 200 instants for 700 events: ties on created_at, broken by id.
  const instants = Array.from({ length: 200 }, () => NOW.minus({ milliseconds: Math.floor(rnd() * 25 * 86_400_000) }))
  for (let i = 0; i < 700; i++) {
    const geo = rnd() < 0.6
    const properties: Record<string, string> = { plan: pick(['free', 'pro', 'team']) }
    if (rnd() < 0.3) properties['quote"d, key'] = 'a,b\nc é'
    rows.push({
      id: `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`,
      name: pick(['screen_view', 'screen_view', 'click', 'purchase']),
      device_id: `d${Math.floor(rnd() * 20)}`,
      profile_id: `u${Math.floor(rnd() * 10)}`,
      project_id: i % 10 === 9 ? OTHER : PROJECT,
      session_id: `s${Math.floor(rnd() * 50)}`,
      created_at: chInstant(pick(instants)),
      path: `/p/${Math.floor(rnd() * 9)}`,
      origin: 'https://example.com',
      referrer: pick(['', 'https://google.com/']),
      referrer_name: pick(['', 'Google']),
      referrer_type: pick(['', 'search']),
      duration: Math.floor(rnd() * 100_000),
      revenue: rnd() < 0.2 ? Math.floor(rnd() * 5000) : 0,
      properties,
      country: pick(['US', 'SE', 'DE']),
      city: pick(['New York', 'Stockholm', 'Berlin']),
      region: pick(['NY', 'AB']),
      // Exactly representable as Float32.
      longitude: geo ? Math.floor(rnd() * 720) / 4 - 90 : null,
      latitude: geo ? Math.floor(rnd() * 360) / 4 - 45 : null,
      os: pick(['iOS', 'Android', 'macOS']),
      os_version: '17',
      browser: pick(['Safari', 'Chrome']),
      browser_version: '120',
      device: pick(['mobile', 'desktop']),
      brand: '',
      model: '',
      sdk_name: 'web',
      sdk_version: '1.0.0',
      imported_at: rnd() < 0.2 ? '2026-03-01 04:05:06' : null,
    })
  }
}
generate()

/** The event objects NDJSON writes for `includes=properties,geo,importedAt,revenue`, from the rows. */
const INCLUDES = 'properties,geo,importedAt,revenue'
const expectedObject = (r: Row) => ({
  id: r.id,
  name: r.name,
  deviceId: r.device_id,
  profileId: r.profile_id,
  projectId: r.project_id,
  sessionId: r.session_id,
  createdAt: `${r.created_at.replace(' ', 'T')}Z`,
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
  importedAt: r.imported_at === null ? null : `${r.imported_at.replace(' ', 'T')}.000Z`,
  revenue: r.revenue,
})
const expected = (where: (r: Row) => boolean = () => true) =>
  rows
    .filter((r) => r.project_id === PROJECT && instantOf(r) >= FROM && instantOf(r) < TO && where(r))
    .sort(exportOrder)
    .map(expectedObject)

let rt: TestRuntime
let app: ReturnType<typeof testApp>
let headers: Record<string, string>

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000', LOG_LEVEL: process.env.DEBUG_LOG ?? 'silent' })
  await createProject(rt.runner, { id: PROJECT, name: 'Columnar', timezone: 'UTC', organizationId: ORG })
  await createProject(rt.runner, { id: OTHER, name: 'Other', timezone: 'UTC', organizationId: ORG })
  const client = await createClientRow(rt.runner, { type: 'read', projectId: PROJECT, organizationId: ORG, name: 'col-reader' })
  headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
  for (let i = 0; i < 3; i++) await rt.engine.client.insert({ table: 'events', values: rows.filter((_, j) => j % 3 === i), format: 'JSONEachRow' })
  app = testApp(rt, { now: () => NOW.toJSDate() })
})

afterAll(async () => {
  await rt?.dispose()
})

const query = (params: Record<string, string>) => new URLSearchParams({ start: START, end: END, includes: INCLUDES, ...params }).toString()

async function download(path: string, init: RequestInit = {}) {
  const res = await app.request(path, { ...init, headers: { ...headers, ...(init.headers as Record<string, string>) } })
  const body = new Uint8Array(await res.arrayBuffer())
  expect(res.status, Buffer.from(body.subarray(0, 300)).toString()).toBe(200)
  return { res, body }
}

const ndjson = (body: Uint8Array) =>
  Buffer.from(body)
    .toString()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)

async function readFormat(format: 'parquet' | 'arrow', body: Uint8Array): Promise<ReadBack> {
  return format === 'parquet' ? readParquet(body) : readArrowStream(body)
}

/** The column types each reader reports for the columns of INCLUDES. */
const TYPES = {
  parquet: {
    id: 'VARCHAR',
    createdAt: 'TIMESTAMP WITH TIME ZONE',
    importedAt: 'TIMESTAMP WITH TIME ZONE',
    duration: 'UBIGINT',
    revenue: 'UBIGINT',
    latitude: 'FLOAT',
    properties: 'MAP(VARCHAR, VARCHAR)',
    name: 'VARCHAR',
  },
  arrow: {
    id: 'Utf8',
    createdAt: 'Timestamp<MILLISECOND, UTC>',
    importedAt: 'Timestamp<MILLISECOND, UTC>',
    duration: 'Uint64',
    revenue: 'Uint64',
    latitude: 'Float32',
    properties: 'Map<{key:Utf8, value:Utf8}>',
    name: 'Utf8',
  },
}

describe.each(['parquet', 'arrow'] as const)('format=%s on /export/events', (format) => {
  it('holds the rows of the NDJSON export, in its order, with typed columns named as its keys', async () => {
    const want = expected()
    expect(want.length).toBeGreaterThan(400)
    const text = ndjson((await download(`/export/events?${query({ format: 'ndjson' })}`)).body)
    expect(text).toEqual(want)
    const { res, body } = await download(`/export/events?${query({ format })}`, { headers: { 'accept-encoding': 'gzip' } })
    expect(res.headers.get('content-type')).toBe(format === 'parquet' ? 'application/vnd.apache.parquet' : 'application/vnd.apache.arrow.stream')
    // Parquet compresses inside, Arrow is left as it is: neither is gzipped on top.
    expect(res.headers.get('content-encoding')).toBeNull()
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="events-${PROJECT}-20260220T000000Z-20260310T000000Z.${format === 'parquet' ? 'parquet' : 'arrows'}"`,
    )
    const read = await readFormat(format, body)
    expect(Object.keys(read.types)).toEqual(Object.keys(want[0]!))
    expect(read.types).toMatchObject(TYPES[format])
    expect(read.rows).toEqual(text)
  })

  it('applies event, filters and a start/end with a time of day as NDJSON does', async () => {
    const filters = JSON.stringify([{ name: 'os', operator: 'is', value: ['iOS', 'Android'] }])
    const params = { event: 'screen_view', filters, start: '2026-02-25T06:30:00Z', end: '2026-03-05T18:00:00Z' }
    const from = DateTime.fromISO(params.start)
    const to = DateTime.fromISO(params.end).plus({ milliseconds: 1 })
    const want = rows
      .filter((r) => r.project_id === PROJECT && instantOf(r) >= from && instantOf(r) < to && r.name === 'screen_view' && r.os !== 'macOS')
      .sort(exportOrder)
      .map(expectedObject)
    expect(want.length).toBeGreaterThan(50)
    const read = await readFormat(format, (await download(`/export/events?${query({ ...params, format })}`)).body)
    expect(read.rows).toEqual(want)
  })

  it('writes a valid file with the columns and no rows when nothing matches', async () => {
    const read = await readFormat(format, (await download(`/export/events?${query({ format, event: 'nothing-of-that-name' })}`)).body)
    expect(read.rows).toEqual([])
    expect(read.types).toMatchObject(TYPES[format])
  })

  it('typed profile and meta as JSON text with the NDJSON objects', async () => {
    const q = query({ includes: 'profile,meta' })
    const text = ndjson((await download(`/export/events?${q}&format=ndjson`)).body)
    const read = await readFormat(format, (await download(`/export/events?${q}&format=${format}`)).body)
    expect(read.rows).toEqual(text)
    // No profile rows here: every profile is the empty object of an identified visitor, seen at the event.
    const first = expected()[0]!
    expect(text[0]!.profile).toEqual({
      id: first.profileId,
      email: '',
      avatar: '',
      firstName: '',
      lastName: '',
      createdAt: first.createdAt,
      lastSeenAt: first.createdAt,
      isExternal: true,
      projectId: first.projectId,
      groups: [],
      properties: {},
    })
  })
})

describe('format=parquet: how the file is written', () => {
  it('compresses every column chunk with zstd, in plain pages without dictionaries', async () => {
    const { body } = await download(`/export/events?${query({ format: 'parquet' })}`)
    const dir = mkdtempSync(join(tmpdir(), 'quarry-parquet-meta-'))
    try {
      const path = join(dir, 'export.parquet')
      writeFileSync(path, body)
      const chunks = await readParquetFile(
        path,
        'SELECT DISTINCT compression, encodings, dictionary_page_offset IS NULL AS plain FROM parquet_metadata(t_path) ORDER BY ALL',
      )
      // Every column chunk: zstd (the issue asks for compression inside), no dictionary page.
      expect(chunks.length).toBeGreaterThan(0)
      for (const chunk of chunks) {
        expect(chunk.compression).toBe('ZSTD')
        expect(chunk.plain).toBe(true)
        expect(String(chunk.encodings)).not.toMatch(/DICTIONARY/)
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('after: resuming a streamed export', () => {
  const all = () => expected()
  it.each(['ndjson', 'csv', 'parquet', 'arrow'] as const)('%s: continues right after the event, no gap, no repeat', async (format) => {
    const want = all()
    // A cut inside a run of equal instants, where only the id orders the rows.
    const cut = want.findIndex((e, i) => i > 100 && want[i + 1]?.createdAt === e.createdAt)
    expect(cut).toBeGreaterThan(0)
    const { body } = await download(`/export/events?${query({ format, after: want[cut]!.id as string })}`)
    let ids: unknown[]
    if (format === 'ndjson') ids = ndjson(body).map((e) => e.id)
    else if (format === 'csv') ids = Buffer.from(body).toString().trim().split('\n').slice(1).map((l) => JSON.parse(l.split(',')[0]!))
    else ids = (await readFormat(format, body)).rows.map((e) => e.id)
    expect(ids).toEqual(want.slice(cut + 1).map((e) => e.id))
  })

  it('refuses what cannot be resumed with a 400 saying why', async () => {
    const id = all()[10]!.id as string
    const other = rows.find((r) => r.project_id === OTHER)!.id
    const cases: [string, RegExp][] = [
      [`/export/events?format=ndjson&after=${id}`, /explicit start and end/],
      [`/export/events?format=ndjson&start=${START}&after=${id}`, /explicit start and end/],
      [`/export/events?${query({ format: 'ndjson', after: 'not-an-id' })}`, /UUID/],
      [`/export/events?${query({ format: 'ndjson', after: '00000000-0000-4000-8000-000000000000' })}`, /not one of this export's events/],
      [`/export/events?${query({ format: 'arrow', after: other })}`, /not one of this export's events/],
      [`/export/events?${query({ format: 'ndjson', event: 'click', after: all().find((e) => e.name !== 'click')!.id as string })}`, /not one of/],
      [`/export/events?${query({ format: 'json', after: id })}`, /cursor/],
    ]
    for (const [path, message] of cases) {
      const res = await app.request(path, { headers })
      const body = (await res.json()) as { code: string; details: { path: string; message: string }[] }
      expect(res.status, path).toBe(400)
      expect(body.details[0]!.path).toBe('after')
      expect(body.details[0]!.message).toMatch(message)
    }
  })
})

describe('HEAD on a streamed export', () => {
  it.each(['ndjson', 'csv', 'parquet', 'arrow'] as const)('%s: the headers, the exact row count and a size estimate, no body', async (format) => {
    const params = { format, filters: JSON.stringify([{ name: 'country', operator: 'is', value: ['SE'] }]) }
    const want = expected((r) => r.country === 'SE')
    const head = await app.request(`/export/events?${query(params)}`, { method: 'HEAD', headers })
    expect(head.status).toBe(200)
    expect((await head.arrayBuffer()).byteLength).toBe(0)
    expect(head.headers.get('x-quarry-rows')).toBe(String(want.length))
    const { res, body } = await download(`/export/events?${query(params)}`)
    for (const name of ['content-type', 'content-disposition', 'x-quarry-range']) expect(head.headers.get(name)).toBe(res.headers.get(name))
    // Fewer rows than the sample: the estimate is the body's size (the per-block framing aside).
    const estimate = Number(head.headers.get('x-quarry-size-estimate'))
    expect(estimate).toBeGreaterThan(body.length * 0.8)
    expect(estimate).toBeLessThan(body.length * 1.25)
  })

  it('counts what is left after `after`', async () => {
    const want = expected()
    const head = await app.request(`/export/events?${query({ format: 'arrow', after: want[99]!.id as string })}`, { method: 'HEAD', headers })
    expect(head.headers.get('x-quarry-rows')).toBe(String(want.length - 100))
  })
})

describe('text formats in zstd or gzip, as the client asks', () => {
  // The zstd command line tool (Debian's zstd, which .ci/run installs) decodes: not the library that encodes.
  const unzstd = (body: Uint8Array) => execFileSync('zstd', ['-d', '-c', '-q'], { input: body, maxBuffer: 1 << 30 })

  it('zstd when the client rates it highest or as high as gzip, gzip when it rates gzip higher; the bytes decode to the plain export', async () => {
    for (const format of ['csv', 'ndjson'] as const) {
      const plain = Buffer.from((await download(`/export/events?${query({ format })}`)).body)
      for (const [accept, coding] of [
        ['zstd', 'zstd'],
        ['gzip, deflate, br, zstd', 'zstd'],
        ['*', 'zstd'],
        ['gzip;q=1, zstd;q=0.5', 'gzip'],
        ['gzip', 'gzip'],
        ['zstd;q=0, *', 'gzip'],
        ['br, deflate', null],
      ] as const) {
        const got = await download(`/export/events?${query({ format })}`, { headers: { 'accept-encoding': accept } })
        expect(got.res.headers.get('content-encoding'), `${format} ${accept}`).toBe(coding)
        const decoded = coding === 'zstd' ? unzstd(got.body) : coding === 'gzip' ? gunzipSync(got.body) : Buffer.from(got.body)
        expect(decoded.equals(plain), `${format} ${accept}`).toBe(true)
      }
    }
  })

  it('a chart export in CSV comes in zstd too', async () => {
    const q = `/export/charts?${new URLSearchParams({ projectId: PROJECT, format: 'csv', startDate: START, endDate: END, series: JSON.stringify([{ name: 'screen_view' }]) })}`
    const plain = Buffer.from((await download(q)).body)
    const zstd = await download(q, { headers: { 'accept-encoding': 'zstd' } })
    expect(zstd.res.headers.get('content-encoding')).toBe('zstd')
    expect(unzstd(zstd.body).equals(plain)).toBe(true)
    expect(plain.toString().split('\n').length).toBeGreaterThan(2)
  })
})

describe('the generated client', () => {
  it('downloads an Arrow export and asks HEAD for its size', async () => {
    const quarry = createClient<paths>({ baseUrl: 'http://quarry.test', fetch: async (req) => app.fetch(req), headers })
    const got = await quarry.GET('/export/events', {
      params: { query: { format: 'arrow', start: START, end: END, includes: INCLUDES } },
      parseAs: 'arrayBuffer',
    })
    expect(got.response.status).toBe(200)
    expect(readArrowStream(new Uint8Array(got.data as ArrayBuffer)).rows).toEqual(expected())
    const head = await quarry.HEAD('/export/events', { params: { query: { format: 'parquet', start: START, end: END } } })
    expect(head.response.headers.get('x-quarry-rows')).toBe(String(expected().length))
  })
})
