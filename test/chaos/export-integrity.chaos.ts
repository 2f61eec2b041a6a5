/**
 * Issue 7, export integrity at scale: a million events, and while a full cursor walk (JSON pages)
 * and a streamed export (NDJSON) run over real HTTP, another task keeps inserting: events inside
 * the export's window, events after its end, and events of another project. Every pre-existing
 * matching event must come back exactly once from each, compared by an id checksum.
 *
 * Pre-existing events have ids 00000000-0000-4000-8000-<n as 12 hex digits>, n < 1,000,000; the
 * matching ones are the page views, n even. Inserted events have ids starting ffffffff-.
 * test/export-events.test.ts covers the same on a small project, event by event.
 */
import { DateTime } from 'luxon'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../../src/auth/clients.ts'
import { createProject } from '../../src/projects.ts'
import { listen, type RunningServer } from '../../src/server.ts'
import { openTestRuntime, testApp, type TestRuntime } from '../helpers/runtime.ts'
import { recordChaos } from './support.ts'

const PROJECT = 'bulk'
const OTHER = 'other'
const ORG = 'org-bulk'
const ROWS = 1_000_000
const NOW = DateTime.fromISO('2026-03-10T12:00:00.000Z', { zone: 'UTC' })
const SPAN_MS = 20 * 86_400_000
const START = NOW.minus({ days: 25 }).toISO()!
const END = NOW.minus({ minutes: 1 }).toISO()!

let rt: TestRuntime
let server: RunningServer
let base: string
let headers: Record<string, string>
let expected: { count: number; sum: bigint }

const log = (line: string) => process.stderr.write(`[chaos export] ${line}\n`)

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000' })
  await createProject(rt.runner, { id: PROJECT, name: 'Bulk', timezone: 'UTC', organizationId: ORG })
  await createProject(rt.runner, { id: OTHER, name: 'Other', timezone: 'UTC', organizationId: ORG })
  const client = await createClientRow(rt.runner, { type: 'read', projectId: PROJECT, organizationId: ORG, name: 'bulk-reader' })
  headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret, 'accept-encoding': 'identity' }
  await rt.runner.command({
    name: 'bulk_events',
    sql: `INSERT INTO events (id, name, device_id, profile_id, project_id, session_id, created_at, path, origin, country)
          SELECT
            toUUID(concat('00000000-0000-4000-8000-', leftPad(lower(hex(number)), 12, '0'))),
            if(number % 2 = 0, 'screen_view', 'click'),
            concat('dev-', toString(number % 50000)) AS device,
            device,
            {project:String},
            concat('ses-', toString(intDiv(number, 7))),
            -- Many events share an instant, so the cursor's tie-break on id is exercised.
            {end:DateTime64(3, 'UTC')} - toIntervalMillisecond(1000 * intDiv(intDiv(number * {span:UInt64}, {rows:UInt64}), 1000)),
            concat('/p/', toString(number % 500)),
            'https://example.com',
            ['US', 'SE', 'DE', 'FR'][1 + number % 4]
          FROM numbers({rows:UInt64})`,
    params: { project: PROJECT, end: NOW.minus({ minutes: 2 }).toFormat('yyyy-LL-dd HH:mm:ss.SSS'), span: SPAN_MS, rows: ROWS },
  })
  const [row] = await rt.runner.rows<{ n: number; s: string }>(
    {
      name: 'expected',
      sql: `SELECT count() AS n, toString(sum(reinterpretAsUInt64(reverse(unhex(substring(toString(id), 25, 12)))))) AS s
            FROM events WHERE project_id = {project:String} AND name = 'screen_view'`,
      params: { project: PROJECT },
    },
    { timeoutS: 60 },
  )
  expected = { count: row!.n, sum: BigInt(row!.s) }
  expect(expected.count).toBe(ROWS / 2)
  // The id's last 12 hex digits are n: the checksum is the sum of the even n below ROWS.
  expect(expected.sum).toBe(BigInt(ROWS / 2) * BigInt(ROWS / 2 - 1))
  server = await listen(testApp(rt, { now: () => NOW.toJSDate() }), '127.0.0.1', 0)
  base = `http://127.0.0.1:${server.port}`
}, 300_000)

afterAll(async () => {
  await server?.shutdown(1000)
  await rt?.dispose()
})

/** Inserts until stopped: inside the window, after its end, and into another project. */
function startWriter() {
  let stop = false
  let batches = 0
  let rows = 0
  const done = (async () => {
    while (!stop) {
      const b = batches++
      const id = (i: number) => `ffffffff-0000-4000-8000-${(b * 1000 + i).toString(16).padStart(12, '0')}`
      const at = (offsetMs: number) => NOW.plus({ milliseconds: offsetMs }).toFormat('yyyy-LL-dd HH:mm:ss.SSS')
      const values = Array.from({ length: 300 }, (_, i) => ({
        id: id(i),
        name: 'screen_view',
        project_id: i % 3 === 2 ? OTHER : PROJECT,
        device_id: `late-${i}`,
        profile_id: `late-${i}`,
        session_id: `late-${b}`,
        // A third inside the window (anywhere in it), a third after its end.
        created_at: i % 3 === 0 ? at(-((b * 7919 + i * 104729) % SPAN_MS) - 120_000) : at(60_000 + i),
        path: '/late',
        origin: 'https://example.com',
      }))
      await rt.engine.client.insert({ table: 'events', values, format: 'JSONEachRow' })
      rows += values.length
      await new Promise((r) => setTimeout(r, 20))
    }
  })()
  return {
    async stop() {
      stop = true
      await done
      return { batches, rows }
    },
  }
}

/** Tallies ids: each pre-existing one at most once, none from after the window or another project. */
class Tally {
  readonly seen = new Uint8Array(ROWS)
  count = 0
  sum = 0n
  duplicates = 0
  inserted = 0
  foreign: string[] = []

  add(id: string, projectId: string, createdAt: string) {
    if (projectId !== PROJECT || Date.parse(createdAt) > Date.parse(END)) this.foreign.push(`${id} ${projectId} ${createdAt}`)
    if (id.startsWith('ffffffff-')) {
      this.inserted++
      return
    }
    const n = Number.parseInt(id.slice(24), 16)
    if (this.seen[n]) this.duplicates++
    this.seen[n] = 1
    this.count++
    this.sum += BigInt(n)
  }

  /** What the chaos record keeps of this tally against the rows that were there before the writer. */
  figures(expected: { count: number; sum: bigint }) {
    return {
      matching_pre_existing: expected.count,
      returned_pre_existing: this.count,
      duplicates: this.duplicates,
      checksum_matches: this.sum === expected.sum,
    }
  }

  expectEveryPreExistingOnce(expected: { count: number; sum: bigint }) {
    expect(this.foreign).toEqual([])
    expect(this.duplicates).toBe(0)
    expect(this.count).toBe(expected.count)
    expect(this.sum).toBe(expected.sum)
  }
}

const query = `projectId=${PROJECT}&event=screen_view&start=${encodeURIComponent(START)}&end=${encodeURIComponent(END)}`

describe('exports of a million events while inserts run', () => {
  it('a full cursor walk returns every pre-existing matching event exactly once', async () => {
    const writer = startWriter()
    const tally = new Tally()
    const started = performance.now()
    let pages = 0
    let cursor: string | undefined
    do {
      const res = await fetch(`${base}/export/events?${query}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { data: { id: string; projectId: string; createdAt: string }[]; meta: { nextCursor?: string | null } }
      for (const e of body.data) tally.add(e.id, e.projectId, e.createdAt)
      cursor = body.meta.nextCursor ?? undefined
      pages++
    } while (cursor && pages < 2000)
    const wrote = await writer.stop()
    const seconds = (performance.now() - started) / 1000
    log(`cursor walk: ${pages} pages, ${tally.count} pre-existing + ${tally.inserted} inserted since seeding, in ${seconds.toFixed(1)} s; the writer added ${wrote.rows} rows in ${wrote.batches} batches`)
    recordChaos('export_integrity_cursor_walk', {
      command: 'npm run test:chaos (test/chaos/export-integrity.chaos.ts)',
      events: ROWS,
      pages: pages,
      ...tally.figures(expected),
      rows_inserted_meanwhile: wrote.rows,
      seconds: Math.round(seconds * 10) / 10,
    })
    expect(wrote.batches).toBeGreaterThan(10)
    tally.expectEveryPreExistingOnce(expected)
  }, 600_000)

  it('a streamed NDJSON export returns every pre-existing matching event exactly once', async () => {
    const writer = startWriter()
    const tally = new Tally()
    const started = performance.now()
    const res = await fetch(`${base}/export/events?${query}&format=ndjson`, { headers })
    expect(res.status).toBe(200)
    const decoder = new TextDecoder()
    let rest = ''
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      const text = rest + decoder.decode(chunk, { stream: true })
      const lines = text.split('\n')
      rest = lines.pop()!
      for (const line of lines) {
        if (!line) continue
        const e = JSON.parse(line) as { id: string; projectId: string; createdAt: string }
        tally.add(e.id, e.projectId, e.createdAt)
      }
    }
    expect(rest).toBe('')
    const wrote = await writer.stop()
    log(`stream: ${tally.count} pre-existing + ${tally.inserted} inserted since seeding, in ${((performance.now() - started) / 1000).toFixed(1)} s; the writer added ${wrote.rows} rows`)
    recordChaos('export_integrity_stream', {
      command: 'npm run test:chaos (test/chaos/export-integrity.chaos.ts)',
      events: ROWS,
      ...tally.figures(expected),
      rows_inserted_meanwhile: wrote.rows,
      seconds: Math.round(((performance.now() - started) / 1000) * 10) / 10,
    })
    expect(wrote.batches).toBeGreaterThan(3)
    tally.expectEveryPreExistingOnce(expected)
  }, 300_000)
})
