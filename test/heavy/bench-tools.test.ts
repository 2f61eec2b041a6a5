/**
 * The benchmark's tools run against the current schema and queries. They read Quarry's SQL and
 * tables directly, so a change underneath them (a renamed CTE, a new sessions layout) would
 * otherwise go unnoticed until the next benchmark. Each tool runs as its own process on a small
 * seeded directory, as a user runs it.
 */
import { execFile } from 'node:child_process'
import { rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createProject } from '../../src/projects.ts'
import { seedProject } from '../../src/seed/seed.ts'
import { openTestRuntime } from '../helpers/runtime.ts'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const END = new Date('2026-03-02T12:00:00Z')
const DAYS = 45
const WINDOW_DAYS = 30

let dir: string
let sessionsInWindow: number
let sessionsOfProject: number
let eventsOfProject: number

beforeAll(async () => {
  const rt = await openTestRuntime()
  dir = rt.dir
  await createProject(rt.runner, { id: 'p', name: 'p', timezone: 'UTC', organizationId: 'default' })
  await seedProject(rt.runner, { projectId: 'p', events: 20_000, days: DAYS, seed: 11, end: END })
  // What the layout experiment should find: each session starts at its earliest event.
  const events = await rt.runner.rows<{ session_id: string; created_at: string }>(
    { name: 'events', sql: "SELECT session_id, toString(created_at) AS created_at FROM events WHERE project_id = 'p'", params: {} },
    { timeoutS: 30 },
  )
  const starts = new Map<string, number>()
  for (const e of events) {
    if (e.session_id === '') continue
    const at = Date.parse(`${e.created_at.replace(' ', 'T')}Z`)
    starts.set(e.session_id, Math.min(at, starts.get(e.session_id) ?? Infinity))
  }
  const lastDay = Date.parse(`${END.toISOString().slice(0, 10)}T00:00:00Z`)
  const from = lastDay - WINDOW_DAYS * 86_400_000
  const to = lastDay + 86_400_000
  sessionsOfProject = starts.size
  eventsOfProject = events.length
  sessionsInWindow = [...starts.values()].filter((at) => at >= from && at < to).length
  // The tools open the directory themselves: chDB lets one process hold it.
  await rt.close()
}, 120_000)

afterAll(() => rmSync(dir, { recursive: true, force: true }))

const tool = (script: string, args: string[]) =>
  run(process.execPath, ['--import', 'tsx', script, '--dir', dir, '--project', 'p', ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'silent' },
    maxBuffer: 64 * 2 ** 20,
  })

describe('benchmark tools', () => {
  it('bench:profile traces every route asked for, ours and the peer\'s, with the parts the key selected and each aggregation', async () => {
    const { stdout } = await tool('benchmarks/profile.ts', ['--days', String(WINDOW_DAYS), '--endpoints', 'metrics,pages,country,export_charts', '--peer', '--runs', '1'])
    // Each route's section opens with "## <route>: <median> ms"; a route's name may hold ": ".
    const sections = new Map(stdout.split('\n## ').slice(1).map((s) => [/^(.*): [\d.]+ ms\n/.exec(s)?.[1] ?? s, s] as const))
    expect([...sections.keys()].sort()).toEqual(
      ['country', "country (peer: OpenPanel's SQL)", 'export_charts', 'metrics', "metrics (peer: OpenPanel's SQL)", 'pages'].sort(),
    )
    for (const [route, text] of sections) {
      expect(text, route).toMatch(/Selected \d+\/\d+ parts by partition key/)
      expect(text, route).toMatch(/Aggregated\. \d+ to \d+ rows/)
    }
    // /pages joins its ranking to the entry pages of the sessions table.
    expect(sections.get('pages')).toMatch(/quarry\.session_timeline .*Selected/)
    expect(sections.get('pages')).toMatch(/Join data is built/)
  }, 120_000)

  it('sessions-layout builds its copies from the current sessions table, checks they answer as Quarry does, and times them', async () => {
    const { stdout } = await tool('benchmarks/experiments/sessions-layout.ts', ['--days', String(WINDOW_DAYS), '--runs', '1'])
    const report = JSON.parse(stdout.slice(0, stdout.lastIndexOf('}') + 1)) as {
      sessions_in_window: number
      sessions_of_project: number
      sizes: { table: string }[]
    }
    expect(report.sessions_of_project).toBe(sessionsOfProject)
    expect(report.sessions_in_window).toBe(sessionsInWindow)
    expect(report.sizes.map((s) => s.table)).toEqual(['bench_exp.by_start', 'bench_exp.flat', 'bench_exp.zstd', 'quarry.sessions'])
    for (const label of ['country', '/metrics']) {
      for (const layout of ['Quarry (sessions FINAL)', 'by_start (projection, no FINAL)', 'zstd (FINAL)', 'flat, time-sorted snapshot (bound)']) {
        expect(stdout).toMatch(new RegExp(`^${label}: ${layout.replace(/[()]/g, '\\$&')}\\s+p50\\s+[\\d.]+ ms`, 'm'))
      }
    }
  }, 120_000)

  it('export-memory streams every event of the project and reports the memory it took', async () => {
    const { stdout } = await tool('benchmarks/experiments/export-memory.ts', ['--settings', '{"max_threads":1}', '--sample-s', '0.05'])
    const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>
    expect(report).toMatchObject({ project: 'p', settings: { max_threads: 1 }, rows: eventsOfProject })
    expect(report.mb).toBeGreaterThan(0)
    for (const key of ['rss_start_mb', 'rss_growth_peak_mb', 'js_array_buffers_peak_mb', 'js_heap_peak_mb']) expect(typeof report[key], key).toBe('number')
    expect(Array.isArray(report.rss_growth_curve_mb)).toBe(true)
  }, 120_000)
})
