import { DateTime } from 'luxon'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../src/auth/clients.ts'
import { createProject } from '../src/projects.ts'
import { seededRandom } from './helpers/random.ts'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'
import { readArrowStream, readParquet } from './support/columnar-readers.ts'
import { parseCsv } from './helpers/csv.ts'

// /export/charts as rows, one per series point, in every streamed format. Expected points are
// counted here from the inserted events (local days across the DST change, the previous period).

const TZ = 'Europe/Stockholm'
const PROJECT = 'chart-rows'
const ORG = 'org-chart-rows'
const local = (iso: string) => DateTime.fromISO(iso, { zone: TZ })
const chInstant = (t: DateTime) => t.toUTC().toFormat('yyyy-LL-dd HH:mm:ss.SSS')

interface Ev {
  id: string
  name: string
  os: string
  at: DateTime
}
const events: Ev[] = []
{
  const rnd = seededRandom(2222)
  const start = local('2026-03-14')
  for (let i = 0; i < 900; i++) {
    events.push({
      id: `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
      name: rnd() < 0.7 ? 'screen_view' : 'click',
      os: ['iOS', 'Android', 'Windows'][Math.floor(rnd() * 3)]!,
      at: start.plus({ milliseconds: Math.floor(rnd() * 21 * 86_400_000) }),
    })
  }
}

// 2026-03-25 … 2026-04-02 in Stockholm (DST begins 03-29); the previous period is the 9 days before.
const DAYS = Array.from({ length: 9 }, (_, i) => local('2026-03-25').plus({ days: i }))
const PREVIOUS_DAYS = DAYS.map((d) => d.minus({ days: 9 }))
const count = (os: string, day: DateTime) =>
  events.filter((e) => e.name === 'screen_view' && e.os === os && e.at >= day && e.at < day.plus({ days: 1 })).length

interface Point {
  seriesId: string
  event: string
  breakdowns: Record<string, string>
  date: string
  count: number
  previous: number | null
}

/** The points, series ordered by their sum (descending, ties by label), days in order. */
function expectedPoints(previous: boolean, seriesIdOf: (os: string) => string): Point[] {
  const groups = ['iOS', 'Android', 'Windows']
    .map((os) => ({ os, sum: DAYS.reduce((a, d) => a + count(os, d), 0) }))
    .filter((g) => g.sum > 0)
    .sort((a, b) => b.sum - a.sum || (a.os < b.os ? -1 : 1))
  return groups.flatMap(({ os }) =>
    DAYS.map((d, i) => ({
      seriesId: seriesIdOf(os),
      event: 'screen_view',
      breakdowns: { os },
      date: d.toISO({ suppressMilliseconds: true })!,
      count: count(os, d),
      previous: previous ? count(os, PREVIOUS_DAYS[i]!) : null,
    })),
  )
}

let rt: TestRuntime
let app: ReturnType<typeof testApp>
let headers: Record<string, string>

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000' })
  await createProject(rt.runner, { id: PROJECT, name: 'Chart rows', timezone: TZ, organizationId: ORG })
  const client = await createClientRow(rt.runner, { type: 'read', projectId: PROJECT, organizationId: ORG, name: 'chart-rows' })
  headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
  const rows = events.map((e) => ({
    id: e.id,
    name: e.name,
    device_id: 'd',
    profile_id: 'd',
    project_id: PROJECT,
    session_id: 's',
    created_at: chInstant(e.at),
    os: e.os,
  }))
  await rt.engine.client.insert({ table: 'events', values: rows, format: 'JSONEachRow' })
  app = testApp(rt, { now: () => new Date('2026-04-10T10:00:00Z') })
})

afterAll(async () => {
  await rt?.dispose()
})

const params = (extra: Record<string, string>) =>
  new URLSearchParams({
    projectId: PROJECT,
    startDate: '2026-03-25',
    endDate: '2026-04-02',
    series: JSON.stringify([{ name: 'screen_view' }]),
    breakdowns: JSON.stringify([{ name: 'os' }]),
    ...extra,
  }).toString()

async function get(extra: Record<string, string>, init: RequestInit = {}) {
  const res = await app.request(`/export/charts?${params(extra)}`, { ...init, headers: { ...headers, ...(init.headers as Record<string, string>) } })
  const body = new Uint8Array(await res.arrayBuffer())
  expect(res.status, Buffer.from(body.subarray(0, 300)).toString()).toBe(200)
  return { res, body }
}

/** The series ids the JSON chart gives each breakdown value (ids are the JSON chart's, not recomputed). */
async function seriesIds(): Promise<(os: string) => string> {
  const chart = JSON.parse(Buffer.from((await get({ previous: 'true' })).body).toString()) as {
    series: { id: string; event: { breakdowns: { os: string } } }[]
  }
  const ids = new Map(chart.series.map((s) => [s.event.breakdowns.os, s.id]))
  return (os) => ids.get(os)!
}


const utc = (p: Point): Point => ({ ...p, date: new Date(p.date).toISOString() })

describe('/export/charts as rows', () => {
  it.each([true, false])('ndjson and csv: one row per series point (previous=%s)', async (previous) => {
    const want = expectedPoints(previous, await seriesIds())
    expect(want.length).toBe(27)
    const extra: Record<string, string> = previous ? { previous: 'true' } : {}
    const nd = await get({ ...extra, format: 'ndjson' })
    expect(nd.res.headers.get('content-disposition')).toBe(
      `attachment; filename="chart-${PROJECT}-20260324T230000Z-20260402T220000Z.ndjson"`,
    )
    expect(nd.res.headers.get('x-quarry-timezone')).toBe(TZ)
    expect(Buffer.from(nd.body).toString().trim().split('\n').map((l) => JSON.parse(l))).toEqual(want)

    const [header, ...cells] = parseCsv(Buffer.from((await get({ ...extra, format: 'csv' })).body).toString())
    expect(header).toEqual(['seriesId', 'event', 'breakdowns', 'date', 'count', 'previous'])
    const fromCsv = cells.map(([seriesId, event, breakdowns, date, c, p]) => ({
      seriesId,
      event,
      breakdowns: JSON.parse(breakdowns!),
      date,
      count: Number(c),
      previous: p === '' ? null : Number(p),
    }))
    expect(fromCsv).toEqual(want)
  })

  it('parquet and arrow: the same points with typed columns (UTC timestamps, doubles, a map)', async () => {
    const want = expectedPoints(true, await seriesIds()).map(utc)
    const parquet = await readParquet((await get({ previous: 'true', format: 'parquet' })).body)
    expect(parquet.types).toEqual({
      seriesId: 'VARCHAR',
      event: 'VARCHAR',
      breakdowns: 'MAP(VARCHAR, VARCHAR)',
      date: 'TIMESTAMP WITH TIME ZONE',
      count: 'DOUBLE',
      previous: 'DOUBLE',
    })
    expect(parquet.rows).toEqual(want)
    const arrow = readArrowStream((await get({ previous: 'true', format: 'arrow' })).body)
    expect(arrow.types).toMatchObject({ date: 'Timestamp<MILLISECOND, UTC>', count: 'Float64', previous: 'Float64', breakdowns: 'Map<{key:Utf8, value:Utf8}>' })
    expect(arrow.rows).toEqual(want)
  })

  it('HEAD: the exact number of points and a size estimate, no body', async () => {
    const want = expectedPoints(false, () => '')
    const head = await app.request(`/export/charts?${params({ format: 'parquet' })}`, { method: 'HEAD', headers })
    expect(head.status).toBe(200)
    expect((await head.arrayBuffer()).byteLength).toBe(0)
    expect(head.headers.get('x-quarry-rows')).toBe(String(want.length))
    const { body } = await get({ format: 'parquet' })
    expect(Number(head.headers.get('x-quarry-size-estimate'))).toBe(body.length)
  })

  it('refuses an unknown format with a 400', async () => {
    const res = await app.request(`/export/charts?${params({ format: 'xlsx' })}`, { headers })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { details: { path: string }[] }).details[0]!.path).toBe('format')
  })
})
