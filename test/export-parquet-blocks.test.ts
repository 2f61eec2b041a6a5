import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../src/auth/clients.ts'
import { createProject } from '../src/projects.ts'
import { openTestRuntime, testApp, type TestRuntime } from './helpers/runtime.ts'
import { readParquetFile } from './support/columnar-readers.ts'

// The row groups of a Parquet export: one per block the engine streams, and a block holds more
// than one granule (8,192 rows, the table's index_granularity) since export-formats.ts asks for
// blocks of up to 32,768 rows. Read back by DuckDB from the file's own footer.

const PROJECT = 'blocks'
const ROWS = 40_000
const GRANULE = 8192
const BLOCK_ROWS = 32_768
const END = '2026-03-10 12:00:00.000'

let rt: TestRuntime
let app: ReturnType<typeof testApp>
let headers: Record<string, string>

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000', LOG_LEVEL: process.env.DEBUG_LOG ?? 'silent' })
  await createProject(rt.runner, { id: PROJECT, name: 'Blocks', timezone: 'UTC', organizationId: 'org-blocks' })
  const client = await createClientRow(rt.runner, { type: 'read', projectId: PROJECT, organizationId: 'org-blocks', name: 'reader' })
  headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
  // One part of ROWS events, one a second apart over the 11 hours before END.
  await rt.runner.command({
    name: 'blocks_events',
    sql: `INSERT INTO events (id, name, device_id, profile_id, project_id, session_id, created_at, path, origin)
          SELECT generateUUIDv4(number), 'screen_view', concat('d', toString(number % 97)), '', {project:String},
                 concat('s', toString(intDiv(number, 5))), {end:DateTime64(3, 'UTC')} - toIntervalSecond(number + 1),
                 concat('/p/', toString(number % 13)), 'https://example.com'
          FROM numbers({rows:UInt64})`,
    params: { project: PROJECT, end: END, rows: ROWS },
  })
  app = testApp(rt, { now: () => new Date('2026-03-10T12:00:00.000Z') })
})

afterAll(async () => {
  await rt?.dispose()
})

describe('format=parquet: row groups', () => {
  it('holds blocks of several granules, none over 32,768 rows, every event once', async () => {
    const res = await app.request(`/export/events?format=parquet&start=2026-03-09&end=2026-03-10`, { headers })
    expect(res.status).toBe(200)
    const dir = mkdtempSync(join(tmpdir(), 'quarry-parquet-blocks-'))
    try {
      const path = join(dir, 'export.parquet')
      writeFileSync(path, new Uint8Array(await res.arrayBuffer()))
      const groups = await readParquetFile(
        path,
        'SELECT DISTINCT row_group_id, row_group_num_rows AS n FROM parquet_metadata(t_path) ORDER BY row_group_id',
      )
      const sizes = groups.map((g) => g.n as number)
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(ROWS)
      expect(Math.max(...sizes)).toBeGreaterThan(GRANULE)
      expect(Math.max(...sizes)).toBeLessThanOrEqual(BLOCK_ROWS)
      const [read] = await readParquetFile(path, 'SELECT count(*) AS n, count(DISTINCT id) AS ids FROM t')
      expect(read).toEqual({ n: ROWS, ids: ROWS })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
