/**
 * `quarry import` as a user runs it: arguments, exit codes, what goes to stdout (one JSON line)
 * and stderr (bad rows, and a progress bar only on a terminal).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { quarry, ROOT } from './helpers/cli.ts'

const dir = mkdtempSync(join(tmpdir(), 'quarry-import-cli-'))
const data = join(dir, 'data')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const write = (name: string, content: string) => {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}
const event = (i: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ name: 'screen_view', deviceId: `d${i}`, sessionId: `s${i % 3}`, createdAt: `2026-04-01T10:00:${String(i % 60).padStart(2, '0')}Z`, path: `/p${i}`, ...extra })

const good = write('good.ndjson', `${[1, 2, 3].map((i) => event(i)).join('\n')}\n`)
const bad = write('bad.ndjson', `${event(4)}\n${event(5, { createdAt: 'later' })}\n${event(6)}\n`)
const csv = write('more.csv', 'name,createdAt,deviceId\nclick,2026-04-02T00:00:00Z,d9\n')

beforeAll(async () => {
  const created = await quarry(data, ['projects', 'create', 'p1'])
  expect(created.code, created.stderr).toBe(0)
}, 60_000)

describe('import arguments', () => {
  it.concurrent.for([
    ['without --project', ['import', good], 'import needs --project'],
    ['without files', ['import', '--project', 'p1'], 'import needs at least one file'],
    ['an unknown --format', ['import', '--project', 'p1', '--format', 'xml', good], '--format must be one of ndjson, csv, parquet'],
    ['an unknown --on-error', ['import', '--project', 'p1', '--on-error', 'ignore', good], '--on-error must be skip or abort'],
    ['a name without a format', ['import', '--project', 'p1', join(dir, 'events.txt')], 'cannot tell the format of'],
    ['an invalid project id', ['import', '--project', 'no spaces', good], 'invalid project id'],
  ] as const)('%s: exit 2 with the usage', async ([, args, message], { expect }) => {
    const result = await quarry(data, [...args])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(message)
    expect(result.stderr).toContain('import --project ID [--format ndjson|csv|parquet]')
    expect(result.stdout).toBe('')
  })
})

describe('import', () => {
  it('refuses a missing file and an unknown project, exit 1', async () => {
    const missing = await quarry(data, ['import', '--project', 'p1', join(dir, 'nope.ndjson')])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('nope.ndjson: no such file')
    const unknown = await quarry(data, ['import', '--project', 'p404', good])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('project p404 does not exist')
  })

  it('prints one JSON line of totals and no progress off a terminal; again adds nothing', async () => {
    const first = await quarry(data, ['import', '--project', 'p1', good, csv])
    expect(first.code, first.stderr).toBe(0)
    expect(first.stderr).toBe('')
    const lines = first.stdout.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toEqual({
      project: 'p1',
      imported: 4,
      rejected: 0,
      duplicates: 0,
      files: [
        { file: good, format: 'ndjson', imported: 3, duplicates: 0, rejected: 0, aborted: false },
        { file: csv, format: 'csv', imported: 1, duplicates: 0, rejected: 0, aborted: false },
      ],
    })
    const again = await quarry(data, ['import', '--project', 'p1', good, csv])
    expect(JSON.parse(again.stdout)).toMatchObject({ imported: 0, duplicates: 4 })
  })

  it('aborts at a bad row: its line on stderr, exit 1, later files left alone', async () => {
    const result = await quarry(data, ['import', '--project', 'p1', bad, good])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`quarry import: ${bad}:2: created_at/createdAt: expected an ISO 8601 date-time`)
    expect(result.stderr).toContain('aborted at its first bad row; nothing from it was imported')
    expect(JSON.parse(result.stdout)).toMatchObject({
      imported: 0,
      rejected: 1,
      files: [{ file: bad, imported: 0, rejected: 1, aborted: true }],
    })
  })

  it('skips bad rows with --on-error skip', async () => {
    const result = await quarry(data, ['import', '--project', 'p1', '--on-error', 'skip', bad])
    expect(result.code).toBe(0)
    expect(result.stderr.trim().split('\n')).toEqual([`quarry import: ${bad}:2: created_at/createdAt: expected an ISO 8601 date-time (e.g. 2026-04-14T22:37:12.345Z), got "later"`])
    expect(JSON.parse(result.stdout)).toMatchObject({ imported: 2, rejected: 1, duplicates: 0 })
  })

  const hasScript = spawnSync('script', ['--version']).status === 0
  it.skipIf(!hasScript)('draws a progress bar on a terminal', () => {
    // `script` gives the command a pseudo-terminal; stdout and stderr both reach its output.
    const command = [process.execPath, join(ROOT, 'bin/quarry.js'), 'import', '--project', 'p1', '--format', 'ndjson', good]
      .map((a) => `'${a}'`)
      .join(' ')
    const output = execFileSync('script', ['-qec', command, '/dev/null'], {
      env: { ...process.env, QUARRY_DATA_DIR: data, LOG_LEVEL: 'silent', QUARRY_DEMO: '0' },
      encoding: 'utf8',
    })
    expect(output).toContain('good.ndjson  [==============================] 100%  3 rows')
    expect(output).toContain('\r\x1b[K')
    expect(output).toContain('"duplicates":3')
  })
})
