/**
 * The importer on the embedded engine with real files: NDJSON and CSV written here, Parquet
 * written by ClickHouse itself; both column shapes; bad rows by line; skip and abort; importing
 * again; the sessions the view derives. Expected values come from the rows written here.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IMPORT_COLUMNS } from '../src/import/event-row.ts'
import { FileError, importFile, type ImportOptions, type Rejection } from '../src/import/import.ts'
import { formatOf } from '../src/import/sources.ts'
import { createProject } from '../src/projects.ts'
import { openTestRuntime, type TestRuntime } from './helpers/runtime.ts'

let rt: TestRuntime
let dir: string

beforeAll(async () => {
  rt = await openTestRuntime()
  dir = mkdtempSync(join(tmpdir(), 'quarry-import-'))
})
afterAll(async () => {
  await rt?.dispose()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

let projects = 0
async function freshProject(): Promise<string> {
  const id = `imp-${++projects}`
  await createProject(rt.runner, { id, name: id, timezone: 'UTC', organizationId: 'org' })
  return id
}

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}

async function run(path: string, projectId: string, extra: Partial<ImportOptions> = {}) {
  const rejections: Rejection[] = []
  const result = await importFile(rt.engine, path, {
    projectId,
    format: formatOf(path)!,
    onError: 'abort',
    onReject: (r) => rejections.push(r),
    now: new Date('2026-05-01T12:00:00Z'),
    ...extra,
  })
  return { ...result, rejections: rejections.map((r) => ({ line: r.line, message: r.message })) }
}

const sql = <T>(query: string, params: Record<string, unknown> = {}) =>
  rt.runner.rows<T>({ name: 'test', sql: query, params }, { timeoutS: 30 })

type Stored = Record<string, unknown>
const stored = (project: string) =>
  sql<Stored>(
    `SELECT * EXCEPT (project_id), toString(project_id) AS project_id FROM events
     WHERE project_id = {p:String} ORDER BY created_at, id`,
    { p: project },
  )

const count = async (project: string) =>
  Number((await sql<{ n: number }>('SELECT count() AS n FROM events WHERE project_id = {p:String}', { p: project }))[0]!.n)

const stagingLeft = async () =>
  (await sql<{ name: string }>("SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 'quarry_import_%'")).length

// Two sessions and a server-side event, in `events` column names as ClickHouse writes JSONEachRow.
const ROWS = [
  {
    id: '11111111-1111-4111-8111-111111111111',
    name: 'screen_view',
    device_id: 'dev-1',
    profile_id: 'user-1',
    session_id: 'sess-1',
    created_at: '2026-04-01 10:00:00.000',
    path: '/home',
    origin: 'https://example.com',
    referrer: 'https://google.com/',
    referrer_name: 'Google',
    referrer_type: 'search',
    duration: 0,
    revenue: 0,
    properties: { '__query.utm_source': 'news', "it's \"quoted\"": 'smörgåsbord – 日本語' },
    country: 'SE',
    city: 'Stockholm',
    region: 'Stockholm County',
    longitude: 18.07,
    latitude: 59.33,
    os: 'iOS',
    os_version: '17.4',
    browser: 'Safari',
    browser_version: '17.4',
    device: 'mobile',
    brand: 'Apple',
    model: 'iPhone',
    sdk_name: 'web',
    sdk_version: '1.0.0',
    imported_at: null,
  },
  {
    id: '22222222-2222-4222-8222-222222222222',
    name: 'screen_view',
    device_id: 'dev-1',
    profile_id: 'user-1',
    session_id: 'sess-1',
    created_at: '2026-04-01 10:00:30.500',
    path: '/pricing',
    origin: 'https://example.com',
    properties: {},
    latitude: null,
    longitude: null,
    duration: 30500,
  },
  {
    id: '33333333-3333-4333-8333-333333333333',
    name: 'revenue',
    device_id: 'dev-1',
    profile_id: 'user-1',
    session_id: 'sess-1',
    created_at: '2026-04-01 10:01:00.000',
    revenue: '4990',
    properties: { currency: 'EUR' },
  },
  {
    id: '44444444-4444-4444-8444-444444444444',
    name: 'screen_view',
    device_id: 'dev-2',
    profile_id: 'dev-2',
    session_id: 'sess-2',
    created_at: '2026-04-02 23:59:59.999',
    path: '/blog/100%_off',
    origin: 'https://example.com',
  },
  {
    id: '55555555-5555-4555-8555-555555555555',
    name: 'cron',
    device_id: '',
    profile_id: '',
    session_id: '',
    created_at: '2026-03-15 00:00:00.000',
  },
]

/** What events should hold for ROWS imported into `project`, worked out from ROWS. */
function expectedRows(project: string, rows: Record<string, unknown>[] = ROWS): Stored[] {
  return rows
    .map((r) => {
      const out: Stored = {}
      for (const [column, kind] of IMPORT_COLUMNS) {
        const v = r[column]
        if (column === 'project_id') out[column] = project
        else if (column === 'imported_at') out[column] = v ?? '2026-05-01 12:00:00'
        else if (kind === 'count') out[column] = Number(v ?? 0)
        else if (kind === 'coordinate') out[column] = v ?? null
        else if (kind === 'map') out[column] = v ?? {}
        else if (kind === 'list') out[column] = v ?? []
        else out[column] = v ?? ''
      }
      return out
    })
    .sort((a, b) => String(a.created_at).localeCompare(String(b.created_at)))
}

/** Floats come back as Float32. */
const roundCoordinates = (rows: Stored[]) =>
  rows.map((r) => ({
    ...r,
    latitude: r.latitude === null ? null : Math.round(Number(r.latitude) * 1000) / 1000,
    longitude: r.longitude === null ? null : Math.round(Number(r.longitude) * 1000) / 1000,
  }))

const ndjson = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n'

/** The same rows as /export/events?includes=properties,geo,device,referrer,revenue writes them (plus sdk fields). */
function openPanelShape(r: Record<string, any>, projectId = 'somewhere-else') {
  return {
    id: r.id,
    name: r.name,
    deviceId: r.device_id ?? '',
    profileId: r.profile_id ?? '',
    projectId,
    sessionId: r.session_id ?? '',
    createdAt: `${String(r.created_at).replace(' ', 'T')}Z`,
    path: r.path ?? '',
    origin: r.origin ?? '',
    country: r.country ?? '',
    city: r.city ?? '',
    os: r.os ?? '',
    browser: r.browser ?? '',
    duration: r.duration ?? 0,
    properties: r.properties ?? {},
    region: r.region ?? '',
    latitude: r.latitude ?? null,
    longitude: r.longitude ?? null,
    device: r.device ?? '',
    brand: r.brand ?? '',
    model: r.model ?? '',
    osVersion: r.os_version ?? '',
    browserVersion: r.browser_version ?? '',
    referrer: r.referrer ?? '',
    referrerName: r.referrer_name ?? '',
    referrerType: r.referrer_type ?? '',
    sdkName: r.sdk_name ?? '',
    sdkVersion: r.sdk_version ?? '',
    revenue: Number(r.revenue ?? 0),
    profile: { id: r.profile_id ?? '', isExternal: false },
  }
}

describe('import', () => {
  it('covers every events column, in table order', async () => {
    const columns = await sql<{ name: string }>(
      "SELECT name FROM system.columns WHERE database = currentDatabase() AND table = 'events' ORDER BY position",
    )
    expect(IMPORT_COLUMNS.map(([c]) => c)).toEqual(columns.map((c) => c.name))
  })

  it('loads NDJSON in events column names, into the project given', async () => {
    const p = await freshProject()
    const result = await run(file('events.ndjson', ndjson(ROWS.map((r) => ({ ...r, project_id: 'ignored' })))), p)
    expect(result).toMatchObject({ imported: ROWS.length, duplicates: 0, rejected: 0, aborted: false, rejections: [] })
    expect(roundCoordinates(await stored(p))).toEqual(roundCoordinates(expectedRows(p)))
    expect(await stagingLeft()).toBe(0)
  })

  it("loads OpenPanel's export shape to the same rows", async () => {
    const p = await freshProject()
    const result = await run(file('openpanel.ndjson', ndjson(ROWS.map((r) => openPanelShape(r)))), p)
    expect(result).toMatchObject({ imported: ROWS.length, rejected: 0 })
    expect(roundCoordinates(await stored(p))).toEqual(roundCoordinates(expectedRows(p)))
  })

  it('loads gzipped NDJSON', async () => {
    const p = await freshProject()
    const result = await run(file('events.ndjson.gz', gzipSync(ndjson(ROWS))), p)
    expect(result.imported).toBe(ROWS.length)
    expect(await count(p)).toBe(ROWS.length)
  })

  it('derives sessions from the imported events', async () => {
    const p = await freshProject()
    await run(file('sessions.ndjson', ndjson(ROWS)), p)
    const sessions = await sql<Record<string, unknown>>(
      `SELECT id, profile_id, event_count, screen_view_count, duration, is_bounce, revenue, entry_path, exit_path,
              referrer_name, utm_source, country
       FROM sessions FINAL WHERE project_id = {p:String} ORDER BY id`,
      { p },
    )
    // From ROWS: sess-1 has two views 30.5 s apart and a revenue event 60 s after its start.
    expect(sessions).toEqual([
      {
        id: 'sess-1',
        profile_id: 'user-1',
        event_count: 3,
        screen_view_count: 2,
        duration: 60000,
        is_bounce: 0,
        revenue: 4990,
        entry_path: '/home',
        exit_path: '/pricing',
        referrer_name: 'Google',
        utm_source: 'news',
        country: 'SE',
      },
      {
        id: 'sess-2',
        profile_id: 'dev-2',
        event_count: 1,
        screen_view_count: 1,
        duration: 0,
        is_bounce: 1,
        revenue: 0,
        entry_path: '/blog/100%_off',
        exit_path: '/blog/100%_off',
        referrer_name: '',
        utm_source: '',
        country: '',
      },
    ])
  })

  it('adds nothing when the same file is imported again, nor for ids the file repeats', async () => {
    const p = await freshProject()
    const path = file('twice.ndjson', ndjson([...ROWS, ROWS[0]]))
    const first = await run(path, p)
    expect(first).toMatchObject({ imported: ROWS.length, duplicates: 1 })
    const before = await stored(p)
    const sessionsBefore = await sql('SELECT * FROM sessions FINAL WHERE project_id = {p:String} ORDER BY id', { p })
    const second = await run(path, p)
    expect(second).toMatchObject({ imported: 0, duplicates: ROWS.length + 1, rejected: 0 })
    expect(await stored(p)).toEqual(before)
    expect(await sql('SELECT * FROM sessions FINAL WHERE project_id = {p:String} ORDER BY id', { p })).toEqual(sessionsBefore)
    // The same ids in another project are other events.
    const other = await freshProject()
    expect((await run(path, other)).imported).toBe(ROWS.length)
  })

  it('gives rows without ids stable ids, so they are not imported twice either', async () => {
    const p = await freshProject()
    const path = file('no-ids.ndjson', ndjson(ROWS.map(({ id: _, ...rest }) => rest)))
    expect((await run(path, p)).imported).toBe(ROWS.length)
    expect((await run(path, p)).imported).toBe(0)
    expect(await count(p)).toBe(ROWS.length)
  })

  it('imports a part of a file that was added later, and only that', async () => {
    const p = await freshProject()
    await run(file('part.ndjson', ndjson(ROWS.slice(0, 2))), p)
    const result = await run(file('whole.ndjson', ndjson(ROWS)), p)
    expect(result).toMatchObject({ imported: ROWS.length - 2, duplicates: 2 })
    expect(await count(p)).toBe(ROWS.length)
  })
})

describe('bad rows', () => {
  const lines = [
    JSON.stringify(ROWS[0]), // 1
    'not json', // 2
    '[1, 2]', // 3
    '', // 4: blank, skipped
    JSON.stringify({ name: 'x' }), // 5
    JSON.stringify(ROWS[1]), // 6
    JSON.stringify({ ...ROWS[2], id: 'nope' }), // 7
    JSON.stringify({ ...ROWS[3], latitude: 123 }), // 8
    JSON.stringify(ROWS[4]), // 9
  ]
  const content = lines.join('\n') + '\n'
  const rejected = [
    { line: 2, message: expect.stringMatching(/^not valid JSON/) },
    { line: 3, message: 'expected a JSON object' },
    { line: 5, message: 'created_at/createdAt: required, expected a date-time, got null' },
    { line: 7, message: 'id: expected a UUID, got "nope"' },
    { line: 8, message: 'latitude: expected a number from -90 to 90 or nothing, got 123' },
  ]

  it('are skipped with their line numbers, and the good rows imported', async () => {
    const p = await freshProject()
    const result = await run(file('bad.ndjson', content), p, { onError: 'skip' })
    expect(result).toMatchObject({ imported: 3, rejected: 5, aborted: false })
    expect(result.rejections).toEqual(rejected)
    expect((await stored(p)).map((r) => r.id)).toEqual([ROWS[4]!.id, ROWS[0]!.id, ROWS[1]!.id])
  })

  it('abort the file at the first one by default, keeping nothing from it', async () => {
    const p = await freshProject()
    const result = await run(file('bad-abort.ndjson', content), p)
    expect(result).toMatchObject({ imported: 0, rejected: 1, aborted: true })
    expect(result.rejections).toEqual([rejected[0]])
    expect(await count(p)).toBe(0)
    expect(await stagingLeft()).toBe(0)
  })

  it('abort even when good rows were already staged in earlier batches', async () => {
    const p = await freshProject()
    const many = Array.from({ length: 50 }, (_, i) => ({ name: 'e', created_at: '2026-04-01 00:00:00', device_id: `d${i}` }))
    const path = file('late-bad.ndjson', ndjson([...many, { name: 'late' }]))
    const result = await run(path, p, { batchRows: 7 })
    expect(result).toMatchObject({ imported: 0, rejected: 1, aborted: true, rejections: [{ line: 51 }] })
    expect(await count(p)).toBe(0)
  })
})

describe('CSV', () => {
  // The shape of /export/events?format=csv: quoted header, properties as JSON text, \N for null.
  const header = ['id', 'name', 'deviceId', 'profileId', 'projectId', 'sessionId', 'createdAt', 'path', 'origin', 'properties', 'latitude', 'referrerName']
  const cell = (v: unknown) => (v === null ? '\\N' : typeof v === 'number' ? String(v) : `"${String(v).replace(/"/g, '""')}"`)
  const line = (values: unknown[]) => values.map(cell).join(',')
  const csvRow = (r: Record<string, any>) => {
    const o = openPanelShape(r) as Record<string, any>
    return line(header.map((h) => (h === 'properties' ? JSON.stringify(o.properties) : o[h])))
  }

  it('loads the export shape, counting the header as line 1 and line breaks inside cells', async () => {
    const p = await freshProject()
    const weird = { ...ROWS[3]!, path: '/two\nlines' }
    const content = [
      line(header), // 1
      csvRow(ROWS[0]!), // 2
      csvRow(weird), // 3-4
      line(['', 'x', '', '', '', '', 'not a date', '', '', '{}', null, '']), // 5
      csvRow(ROWS[4]!), // 6
      line(['a', 'b']), // 7
    ].join('\r\n')
    const result = await run(file('export.csv', content), p, { onError: 'skip' })
    expect(result.rejections).toEqual([
      { line: 5, message: expect.stringMatching(/^created_at\/createdAt: expected an ISO 8601 date-time/) },
      { line: 7, message: 'expected 12 cells as in the header, got 2' },
    ])
    expect(result.imported).toBe(3)
    const rows = await stored(p)
    expect(rows.map((r) => [r.id, r.path, r.properties, r.latitude, r.referrer_name])).toEqual([
      [ROWS[4]!.id, '', {}, null, ''],
      [ROWS[0]!.id, '/home', ROWS[0]!.properties, expect.closeTo(59.33, 3), 'Google'],
      [weird.id, '/two\nlines', {}, null, ''],
    ])
  })

  it('loads a ClickHouse CSV of the events table (maps in ClickHouse text)', async () => {
    const source = await freshProject()
    await run(file('seed-for-csv.ndjson', ndjson(ROWS)), source)
    const path = join(dir, 'clickhouse.csv')
    await rt.engine.client.command({
      query: `INSERT INTO FUNCTION file({path:String}, CSVWithNames) SELECT * FROM events WHERE project_id = {p:String}`,
      query_params: { path, p: source },
    })
    const p = await freshProject()
    const result = await run(path, p)
    expect(result).toMatchObject({ imported: ROWS.length, rejected: 0 })
    expect(roundCoordinates(await stored(p))).toEqual(roundCoordinates(expectedRows(p)).map((r) => ({ ...r, imported_at: '2026-05-01 12:00:00' })))
  })

  it('refuses a file whose header lacks the event name or time', async () => {
    const p = await freshProject()
    await expect(run(file('no-name.csv', 'id,createdAt\n1,2026-01-01\n'), p)).rejects.toThrow(FileError)
    await expect(run(file('no-name.csv', 'id,createdAt\n1,2026-01-01\n'), p)).rejects.toThrow(/no name column/)
    await expect(run(file('empty.csv', ''), p)).rejects.toThrow(/empty/)
    expect(await stagingLeft()).toBe(0)
  })
})

describe('Parquet', () => {
  /** A Parquet file written by ClickHouse from a SELECT. */
  async function parquet(name: string, select: string, params: Record<string, unknown> = {}): Promise<string> {
    const path = join(dir, name)
    await rt.engine.client.command({
      query: `INSERT INTO FUNCTION file({path:String}, Parquet) ${select}`,
      query_params: { path, ...params },
    })
    return path
  }

  it('loads a Parquet export of the events table', async () => {
    const source = await freshProject()
    await run(file('seed-for-parquet.ndjson', ndjson(ROWS)), source)
    const path = await parquet('events.parquet', 'SELECT * FROM events WHERE project_id = {p:String}', { p: source })
    const p = await freshProject()
    const result = await run(path, p)
    expect(result).toMatchObject({ imported: ROWS.length, rejected: 0 })
    expect(roundCoordinates(await stored(p))).toEqual(roundCoordinates(expectedRows(p)).map((r) => ({ ...r, imported_at: '2026-05-01 12:00:00' })))
    expect((await run(path, p)).imported).toBe(0)
  })

  it('loads camelCase columns, reports bad rows by row number, skips or aborts', async () => {
    // Rows 1..6; row 3 has no name and row 5 a bad time.
    const select = `
      SELECT
        toString(generateUUIDv4(number)) AS id,
        if(number = 2, '', 'screen_view') AS name,
        concat('dev-', toString(number % 2)) AS deviceId,
        concat('sess-', toString(number % 2)) AS sessionId,
        if(number = 4, 'yesterday', concat('2026-04-0', toString(number + 1), 'T12:00:00.000Z')) AS createdAt,
        concat('/p', toString(number)) AS path,
        map('k', toString(number)) AS properties,
        toFloat64(number) AS duration
      FROM numbers(6)`
    const path = await parquet('camel.parquet', select)
    const p = await freshProject()
    const aborted = await run(path, p)
    expect(aborted).toMatchObject({ imported: 0, aborted: true, rejections: [{ line: 3, message: expect.stringMatching(/^name: required/) }] })
    expect(await count(p)).toBe(0)
    const skipped = await run(path, p, { onError: 'skip' })
    expect(skipped).toMatchObject({ imported: 4, rejected: 2 })
    expect(skipped.rejections.map((r) => r.line)).toEqual([3, 5])
    const rows = await stored(p)
    expect(rows.map((r) => [r.path, r.created_at, r.device_id, r.profile_id, r.properties, r.duration])).toEqual(
      [0, 1, 3, 5].map((n) => [`/p${n}`, `2026-04-0${n + 1} 12:00:00.000`, `dev-${n % 2}`, `dev-${n % 2}`, { k: String(n) }, n]),
    )
  })

  it('refuses what is not Parquet, keeping nothing', async () => {
    const p = await freshProject()
    await expect(run(file('broken.parquet', 'PAR1 this is not parquet'), p)).rejects.toThrow(/could not read it as Parquet/)
    expect(await stagingLeft()).toBe(0)
  })
})

describe('progress', () => {
  it('is reported while reading in batches, and ends at the whole file', async () => {
    const p = await freshProject()
    const rows = Array.from({ length: 3000 }, (_, i) => ({
      name: 'e',
      created_at: `2026-04-01 00:00:${String(i % 60).padStart(2, '0')}.${String(i).padStart(3, '0').slice(-3)}`,
      device_id: `d${i}`,
      properties: { pad: 'x'.repeat(200) },
    }))
    const seen: { fraction: number | undefined; rows: number }[] = []
    const result = await run(file('big.ndjson', ndjson(rows)), p, { batchRows: 250, onProgress: (x) => seen.push(x) })
    expect(result.imported).toBe(3000)
    expect(seen.at(-1)).toEqual({ fraction: 1, rows: 3000 })
    const fractions = seen.map((s) => s.fraction ?? 0)
    expect([...fractions].sort((a, b) => a - b)).toEqual(fractions)
  })
})
