/**
 * Issue 7, a storm of clients that go away: over real HTTP, eight clients at a time start heavy
 * requests (dashboard lists, charts, streamed exports) and disconnect after a random 20–500 ms,
 * round after round. Afterwards ClickHouse is idle (system.processes lists nothing still at work),
 * the gate is empty, memory has not grown, and latency is what it was before the storm.
 *
 * Embedded engine: system.processes is read through a chDB session of its own (the shared
 * connection runs one query at a time). chDB keeps a killed query's entry, flagged is_cancelled,
 * until the connection's next query; "still at work" means is_cancelled = 0.
 */
import { Session } from 'chdb'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../../src/auth/clients.ts'
import { seedWithProject } from '../../src/cli/seed.ts'
import { createProject } from '../../src/projects.ts'
import { listen, type RunningServer } from '../../src/server.ts'
import { openTestRuntime, testApp, type TestRuntime } from '../helpers/runtime.ts'
import { MB, percentile, recordChaos, round } from './support.ts'

const PROJECT = 'storm'
const NOW = new Date('2026-03-10T12:00:00.000Z')
const ROUNDS = Number(process.env.CHAOS_STORM_ROUNDS ?? 25)
const CLIENTS = 8

let rt: TestRuntime
let server: RunningServer
let base: string
let headers: Record<string, string>
let observer: Session

beforeAll(async () => {
  rt = await openTestRuntime({ QUARRY_RATE_LIMIT: '1000000000' })
  await createProject(rt.runner, { id: PROJECT, name: 'Storm', timezone: 'UTC', organizationId: 'org-storm' })
  await seedWithProject(rt, { projectId: PROJECT, events: 500_000, days: 30, seed: 3, end: NOW })
  const client = await createClientRow(rt.runner, { type: 'read', projectId: PROJECT, organizationId: 'org-storm', name: 'storm' })
  headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }
  server = await listen(testApp(rt, { now: () => NOW }), '127.0.0.1', 0)
  base = `http://127.0.0.1:${server.port}`
  observer = new Session(rt.dir)
}, 300_000)

afterAll(async () => {
  observer?.close()
  await server?.shutdown(1000)
  await rt?.dispose()
})

const log = (line: string) => process.stderr.write(`[chaos disconnect] ${line}\n`)

async function working(): Promise<number> {
  const text = (
    await observer.queryAsync(
      "SELECT count() AS n FROM system.processes WHERE is_cancelled = 0 AND query NOT LIKE '%system.processes%' FORMAT JSONEachRow",
    )
  ).text()
  return (JSON.parse(text) as { n: number }).n
}

let n = 0
/** Heavy requests, each different so that nothing is shared between them. */
const heavy = () => {
  const i = n++
  const f = encodeURIComponent(JSON.stringify([{ name: 'path', operator: 'isNot', value: [`/storm-${i}`] }]))
  return [
    `/insights/${PROJECT}/pages?range=30d&filters=${f}`,
    `/insights/${PROJECT}/referrer?range=30d&filters=${f}`,
    `/export/charts?projectId=${PROJECT}&range=30d&interval=hour&series=${encodeURIComponent(JSON.stringify([{ name: 'screen_view', segment: 'user', filters: JSON.parse(decodeURIComponent(f)) as unknown }]))}&breakdowns=${encodeURIComponent('[{"name":"path"}]')}`,
    `/export/events?projectId=${PROJECT}&format=ndjson&start=2026-02-01`,
    `/export/events?projectId=${PROJECT}&format=csv&includes=properties&start=2026-02-01`,
  ][i % 5]!
}

async function latency(path: string): Promise<number> {
  const started = performance.now()
  const res = await fetch(`${base}${path}`, { headers })
  const text = await res.text()
  expect(res.status, text).toBe(200)
  return performance.now() - started
}

describe(`${ROUNDS} rounds of ${CLIENTS} clients that disconnect mid-request`, () => {
  it('leaves ClickHouse idle, the gate empty, memory flat and latency as before', async () => {
    const probe = `/insights/${PROJECT}/metrics?range=7d`
    for (let i = 0; i < 3; i++) await latency(probe)
    const before = [] as number[]
    for (let i = 0; i < 10; i++) before.push(await latency(probe))
    const js = () => {
      const m = process.memoryUsage()
      return m.heapUsed + m.external
    }
    const jsBefore = js()
    const rssBefore = process.memoryUsage.rss()
    let peakRss = rssBefore
    let peakWorking = 0
    const rssByRound: number[] = []
    const outcomes: Record<string, number> = {}
    const started = performance.now()

    for (let round = 0; round < ROUNDS; round++) {
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          const abort = new AbortController()
          const after = 20 + Math.floor(Math.random() * 480)
          const timer = setTimeout(() => abort.abort(), after)
          try {
            const res = await fetch(`${base}${heavy()}`, { headers, signal: abort.signal })
            const reader = res.body!.getReader()
            while (!(await reader.read()).done) {
              // read until the abort cuts it, or the end
            }
            outcomes[`completed ${res.status}`] = (outcomes[`completed ${res.status}`] ?? 0) + 1
          } catch {
            outcomes.disconnected = (outcomes.disconnected ?? 0) + 1
          } finally {
            clearTimeout(timer)
          }
        }),
      )
      peakWorking = Math.max(peakWorking, await working())
      peakRss = Math.max(peakRss, process.memoryUsage.rss())
      rssByRound.push(process.memoryUsage.rss())
      if (process.env.CHAOS_TRACE) {
        const m = process.memoryUsage()
        log(`round ${round}: rss ${Math.round(m.rss / MB)} heap ${Math.round(m.heapUsed / MB)} external ${Math.round(m.external / MB)} buffers ${Math.round(m.arrayBuffers / MB)}`)
      }
    }
    const stormSeconds = (performance.now() - started) / 1000

    // Idle again, quickly.
    const stoppedAt = performance.now()
    const deadline = stoppedAt + 15_000
    while ((await working()) > 0 || rt.gate.active + rt.gate.queued > 0) {
      if (performance.now() > deadline) break
      await new Promise((r) => setTimeout(r, 50))
    }
    const idleAfterMs = performance.now() - stoppedAt
    const stillWorking = await working()
    log(`after the storm: ${stillWorking} at work, gate active ${rt.gate.active} queued ${rt.gate.queued}, ${Math.round(idleAfterMs)} ms`)
    if (stillWorking > 0) log((await observer.queryAsync("SELECT elapsed, is_cancelled, substring(query, 1, 90) AS q FROM system.processes WHERE query NOT LIKE '%system.processes%' FORMAT JSONEachRow")).text())
    const after = [] as number[]
    for (let i = 0; i < 10; i++) after.push(await latency(probe))
    const rssAfter = process.memoryUsage.rss()
    const jsAfter = js()

    const figures = {
      command: 'npm run test:chaos (test/chaos/disconnect.chaos.ts)',
      rounds: ROUNDS,
      clients_per_round: CLIENTS,
      storm_seconds: round(stormSeconds),
      outcomes,
      peak_queries_at_work_between_rounds: peakWorking,
      idle_after_ms: round(idleAfterMs),
      probe_p50_before_ms: round(percentile(before, 50)),
      probe_p50_after_ms: round(percentile(after, 50)),
      js_heap_and_external_before_mb: round(jsBefore / MB),
      js_heap_and_external_after_mb: round(jsAfter / MB),
      rss_before_mb: round(rssBefore / MB),
      rss_peak_mb: round(peakRss / MB),
      rss_after_mb: round(rssAfter / MB),
      rss_by_round_mb: rssByRound.map((r) => Math.round(r / MB)),
    }
    recordChaos('disconnect', figures)
    log(JSON.stringify(figures))

    expect(outcomes.disconnected ?? 0).toBeGreaterThan((ROUNDS * CLIENTS) / 2)
    expect(stillWorking).toBe(0)
    // Kills take effect within a few hundred milliseconds on a quiet machine (reliability.test.ts
    // measures one); under a storm on a busy one, give them seconds, still far below the minutes
    // the abandoned exports would have run.
    expect(idleAfterMs).toBeLessThan(10_000)
    expect(rt.gate.active + rt.gate.queued).toBe(0)
    expect((await fetch(`${base}/readyz`)).status).toBe(200)
    expect(percentile(after, 50)).toBeLessThan(Math.max(percentile(before, 50) * 2, percentile(before, 50) + 50))
    // Nothing of the abandoned requests stays behind on the JavaScript side (streams, generators,
    // buffers); the process's RSS, which includes chDB's own allocator and caches, moves within a
    // band as those warm up (60 rounds measured: 640-900 MB, no upward trend).
    expect(jsAfter - jsBefore).toBeLessThan(100 * MB)
    expect(rssAfter - rssBefore).toBeLessThan(600 * MB)
  }, 240_000)
})
