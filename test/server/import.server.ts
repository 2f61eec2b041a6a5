/**
 * The importer over HTTP: NDJSON and CSV staged in batches, Parquet bytes streamed to the server
 * (INSERT … FROM input()), bad rows by line, abort keeping nothing, a second import adding nothing.
 */
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { importFile, type ImportOptions, type Rejection } from '../../src/import/import.ts'
import { formatOf } from '../../src/import/sources.ts'
import { createProject } from '../../src/projects.ts'
import { describeServer, openServerRuntime, type ServerRuntime } from './helpers.ts'

describeServer('import into a server', () => {
  let rt: ServerRuntime
  let dir: string
  beforeAll(async () => {
    rt = await openServerRuntime('import')
    dir = mkdtempSync(join(tmpdir(), 'quarry-server-import-'))
  })
  afterAll(async () => {
    await rt?.dispose()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  let n = 0
  const project = async () => {
    const id = `p${++n}`
    await createProject(rt.runner, { id, name: id, timezone: 'UTC', organizationId: 'o' })
    return id
  }
  const run = async (path: string, projectId: string, extra: Partial<ImportOptions> = {}) => {
    const rejections: Rejection[] = []
    const result = await importFile(rt.engine, path, {
      projectId,
      format: formatOf(path)!,
      onError: 'abort',
      onReject: (r) => rejections.push(r),
      ...extra,
    })
    return { ...result, lines: rejections.map((r) => r.line) }
  }
  const rows = (p: string) =>
    rt.runner.rows<{ id: string; name: string; path: string; created_at: string; properties: Record<string, string> }>(
      { name: 'rows', sql: 'SELECT id, name, path, created_at, properties FROM events WHERE project_id = {p:String} ORDER BY created_at, id', params: { p } },
      { timeoutS: 30 },
    )
  const leftovers = async () =>
    (
      await rt.runner.rows(
        { name: 'left', sql: "SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 'quarry_import_%'", params: {} },
        { timeoutS: 30 },
      )
    ).length

  const EVENTS = Array.from({ length: 50 }, (_, i) => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    name: i % 5 === 0 ? 'click' : 'screen_view',
    deviceId: `d${i % 7}`,
    sessionId: `s${i % 7}`,
    createdAt: new Date(Date.UTC(2026, 3, 1, 0, i)).toISOString(),
    path: `/p/${i}`,
    properties: { i: String(i), "it's": 'ünïcode' },
  }))

  it('NDJSON: staged in batches, moved once', async () => {
    const p = await project()
    const path = join(dir, 'events.ndjson')
    writeFileSync(path, EVENTS.map((e) => JSON.stringify(e)).join('\n'))
    expect(await run(path, p, { batchRows: 7 })).toMatchObject({ imported: 50, rejected: 0 })
    expect(await run(path, p)).toMatchObject({ imported: 0, duplicates: 50 })
    const stored = await rows(p)
    expect(stored.map((r) => r.id)).toEqual(EVENTS.map((e) => e.id))
    expect(stored[3]!.properties).toEqual({ i: '3', "it's": 'ünïcode' })
    expect(await leftovers()).toBe(0)
  })

  it('Parquet written by the server, streamed back to it', async () => {
    const p = await project()
    const path = join(dir, 'events.parquet')
    const result = await rt.engine.client.exec({
      query: `SELECT toUUID(concat('00000000-0000-4000-8000-', leftPad(toString(number), 12, '0'))) AS id,
                     if(number = 7, '', 'screen_view') AS name,
                     concat('s', toString(number % 3)) AS session_id,
                     toDateTime64('2026-04-01 00:00:00', 3, 'UTC') + toIntervalMinute(number) AS created_at,
                     concat('/q/', toString(number)) AS path,
                     map('n', toString(number)) AS properties
              FROM numbers(20) FORMAT Parquet`,
    })
    await pipeline(result.stream as Readable, createWriteStream(path))
    const aborted = await run(path, p)
    expect(aborted).toMatchObject({ imported: 0, aborted: true, lines: [8] })
    expect(await rows(p)).toEqual([])
    const skipped = await run(path, p, { onError: 'skip' })
    expect(skipped).toMatchObject({ imported: 19, rejected: 1, lines: [8] })
    const stored = await rows(p)
    expect(stored.map((r) => r.path)).toEqual(Array.from({ length: 20 }, (_, i) => `/q/${i}`).filter((_, i) => i !== 7))
    expect(stored[0]).toMatchObject({ created_at: '2026-04-01 00:00:00.000', properties: { n: '0' } })
    expect((await run(path, p, { onError: 'skip' })).imported).toBe(0)
    expect(await leftovers()).toBe(0)
  })

  it('CSV with a bad row reported by its line', async () => {
    const p = await project()
    const path = join(dir, 'events.csv')
    writeFileSync(path, 'name,createdAt,deviceId\nscreen_view,2026-04-01T00:00:00Z,d1\nscreen_view,never,d2\nclick,2026-04-01T00:01:00Z,d1\n')
    expect(await run(path, p, { onError: 'skip' })).toMatchObject({ imported: 2, rejected: 1, lines: [3] })
  })
})
