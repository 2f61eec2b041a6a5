/**
 * Operating Quarry: GET /metrics read with a strict Prometheus text parser, its counters moving by
 * exactly the requests the test makes; request and statement spans received over OTLP/HTTP by a
 * receiver on loopback, continuing the caller's traceparent; the request id on every log line a
 * request causes, query lines included.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClientRow } from '../src/auth/clients.ts'
import { createQueryGate, OverloadedError } from '../src/clickhouse/gate.ts'
import { createQueryRunner } from '../src/clickhouse/run.ts'
import { createResponseCache } from '../src/http/cache/middleware.ts'
import { eventsWatermark } from '../src/http/cache/watermark.ts'
import { createLogger, logDestination } from '../src/log.ts'
import { createProject } from '../src/projects.ts'
import { SealedHistory } from '../src/services/sealed/index.ts'
import { openRuntime, type Runtime } from '../src/runtime.ts'
import { buildEvents, NOW, PROJECTS } from './fixtures/insights-data.ts'
import { testApp, testConfig } from './helpers/runtime.ts'
import { startOtlpReceiver, SPAN_KIND } from './support/otlp-receiver.ts'
import { parsePrometheusText, type Exposition } from './support/prometheus-text.ts'

const U = PROJECTS.utc.id
let dir: string
let rt: Runtime
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>
let root: { id: string; secret: string }
let headers: Record<string, string>
const logLines: Record<string, unknown>[] = []
const events = buildEvents()

beforeAll(async () => {
  receiver = await startOtlpReceiver()
  dir = mkdtempSync(join(tmpdir(), 'quarry-telemetry-'))
  const config = testConfig({
    QUARRY_DATA_DIR: dir,
    LOG_LEVEL: 'debug',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_SERVICE_NAME: 'quarry-test',
    QUARRY_RATE_LIMIT: '1000000',
    QUARRY_AUTH_FAILURE_LIMIT: '1000000',
    QUARRY_SEALED: '0',
  })
  rt = await openRuntime(config, createLogger('debug', { write: (line: string) => void logLines.push(JSON.parse(line)) }))
  for (const p of Object.values(PROJECTS)) await createProject(rt.runner, { id: p.id, name: p.id, timezone: p.timezone, organizationId: p.organizationId })
  root = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'org-1', name: 'root' })
  headers = { 'openpanel-client-id': root.id, 'openpanel-client-secret': root.secret }
  await rt.engine.client.insert({ table: 'events', values: events, format: 'JSONEachRow' })
})
afterAll(async () => {
  await rt?.close()
  await receiver?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

type App = ReturnType<typeof testApp>
const url = (path: string) => `http://quarry.test${path}`
const get = (app: App, path: string, extra: Record<string, string> = {}) => app.request(url(path), { headers: { ...headers, ...extra } })

async function scrape(app: App, extra: Record<string, string> = {}): Promise<Exposition> {
  const res = await app.request(url('/metrics'), { headers: extra })
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
  return parsePrometheusText(await res.text())
}

/** How much a series moved between two scrapes (absent counts as 0). */
const delta = (before: Exposition, after: Exposition, name: string, labels: Record<string, string>) =>
  (after.value(name, labels) ?? 0) - (before.value(name, labels) ?? 0)

const requests = (route: string, status: number) => ['quarry_http_request_duration_seconds_count', { method: 'GET', route, status: String(status) }] as const

describe('GET /metrics', () => {
  it('counts requests by route template and status, and engine statements by name', async () => {
    const app = testApp(rt, { now: () => NOW })
    const before = await scrape(app)
    const sent = { country: 3, metrics: 2, unknown: 2, noCredentials: 1, wrongSecret: 1 }
    const stats: { queries: number }[] = []
    for (let i = 0; i < sent.country; i++) {
      const res = await get(app, `/insights/${U}/country?range=30d&limit=${i + 1}`)
      expect(res.status).toBe(200)
      // chDB reports a result's rows as what it read (1 for a count over millions): no reads are told.
      const m = /^queries=(\d+)$/.exec(res.headers.get('x-quarry-stats') ?? '')!
      stats.push({ queries: Number(m[1]) })
    }
    for (let i = 0; i < sent.metrics; i++) expect((await get(app, `/insights/${U}/metrics?range=7d`)).status).toBe(200)
    expect((await get(app, '/nope/secret-path-1')).status).toBe(404)
    expect((await get(app, '/insights-not/x')).status).toBe(404)
    expect((await app.request(url(`/insights/${U}/country`))).status).toBe(401)
    expect((await get(app, `/insights/${U}/country`, { 'openpanel-client-secret': `sec_${'0'.repeat(48)}` })).status).toBe(401)
    const after = await scrape(app)

    expect(delta(before, after, ...requests('/insights/:projectId/country', 200))).toBe(sent.country)
    expect(delta(before, after, ...requests('/insights/:projectId/metrics', 200))).toBe(sent.metrics)
    expect(delta(before, after, ...requests('unmatched', 404))).toBe(sent.unknown)
    expect(delta(before, after, ...requests('/insights/:projectId/country', 401))).toBe(sent.noCredentials + sent.wrongSecret)
    // Never a raw path: every route label is a template or "unmatched".
    const routes = new Set(after.find('quarry_http_request_duration_seconds_count').map((s) => s.labels.route))
    expect([...routes].filter((r) => r !== 'unmatched' && !/^\/[a-z/:_A-Z.]*$/.test(r!))).toEqual([])
    expect([...routes].some((r) => r!.includes(U) || r!.includes('nope'))).toBe(false)
    expect(delta(before, after, 'quarry_auth_refusals_total', { reason: 'missing' })).toBe(sent.noCredentials)
    expect(delta(before, after, 'quarry_auth_refusals_total', { reason: 'wrong_secret' })).toBe(sent.wrongSecret)

    // Each country request ran one statement; the embedded engine's reads are not counted (see above).
    expect(stats.every((s) => s.queries === 1)).toBe(true)
    const statement = { statement: 'insights_breakdown:country' }
    expect(delta(before, after, 'quarry_engine_query_duration_seconds_count', statement)).toBe(sent.country)
    expect(delta(before, after, 'quarry_engine_rows_read_total', statement)).toBe(0)
    expect(delta(before, after, 'quarry_engine_bytes_read_total', statement)).toBe(0)

    // The gate is idle between requests; process metrics are there.
    expect(after.value('quarry_query_gate_active')).toBe(0)
    expect(after.value('quarry_query_gate_queued')).toBe(0)
    expect(after.types.get('quarry_process_cpu_user_seconds_total')).toBe('counter')
    expect(after.value('quarry_nodejs_heap_size_used_bytes')).toBeGreaterThan(0)
  })

  it('counts the embedded engine\'s reads by where they ran: on the line, or on a lane when the line was taken', async () => {
    const before = await scrape(testApp(rt))
    const long = rt.runner.rows({ name: 'telemetry_long', sql: 'SELECT sleepEachRow(0.5) AS s, {x:UInt8} AS x FROM numbers(2) SETTINGS max_block_size = 1', params: { x: 1 } }, { timeoutS: 10 })
    await new Promise((resolve) => setTimeout(resolve, 300))
    await rt.runner.rows({ name: 'telemetry_short', sql: 'SELECT {y:UInt8} AS y', params: { y: 2 } }, { timeoutS: 10 })
    await long
    const after = await scrape(testApp(rt))
    expect(delta(before, after, 'quarry_engine_reads_total', { on: 'line' })).toBe(1)
    expect(delta(before, after, 'quarry_engine_reads_total', { on: 'lane' })).toBe(1)
  })

  it('counts engine errors by class, and gate refusals as overloaded', async () => {
    const before = await scrape(testApp(rt))
    const bad = { name: 'telemetry_bad', sql: 'SELECT no_such_column FROM events', params: {} }
    await expect(rt.runner.rows(bad, { timeoutS: 5 })).rejects.toThrow()
    await expect(rt.runner.rows(bad, { timeoutS: 5 })).rejects.toThrow()
    // A gate of one slot and no queue refuses what arrives while its slot is taken.
    const narrow = createQueryRunner(rt.engine, createQueryGate({ concurrency: 1, maxQueued: 0 }), rt.logger, { metrics: rt.metrics })
    const slow = { name: 'telemetry_slow', sql: 'SELECT count() AS n FROM numbers(2000000)', params: {} }
    const outcomes = await Promise.allSettled(Array.from({ length: 4 }, () => narrow.rows(slow, { timeoutS: 10 })))
    const overloaded = outcomes.filter((o) => o.status === 'rejected' && o.reason instanceof OverloadedError).length
    expect(overloaded).toBe(3)
    const after = await scrape(testApp(rt))
    expect(delta(before, after, 'quarry_engine_errors_total', { statement: 'telemetry_bad', class: 'query' })).toBe(2)
    expect(delta(before, after, 'quarry_engine_errors_total', { statement: 'telemetry_slow', class: 'overloaded' })).toBe(overloaded)
    expect(delta(before, after, 'quarry_engine_query_duration_seconds_count', { statement: 'telemetry_slow' })).toBe(4 - overloaded)
  })

  it('reports per project how far the sealed history is behind, and its build durations', async () => {
    const sealed = new SealedHistory({ runner: rt.runner, logger: rt.logger, now: () => new Date(), queryTimeoutS: 10, metrics: rt.metrics })
    const before = await scrape(testApp(rt))
    const started = Date.now()
    await sealed.build(U)
    const took = (Date.now() - started) / 1000
    const after = await scrape(testApp(rt))
    expect(delta(before, after, 'quarry_sealed_build_duration_seconds_count', { project: U })).toBe(1)
    const sum = delta(before, after, 'quarry_sealed_build_duration_seconds_sum', { project: U })
    expect(sum).toBeGreaterThan(0)
    expect(sum).toBeLessThanOrEqual(took)
    // C is the start of the last UTC hour more than an hour old: between one and two hours behind.
    const lag = after.value('quarry_sealed_until_lag_seconds', { project: U })!
    expect(lag).toBeGreaterThanOrEqual(3600)
    expect(lag).toBeLessThanOrEqual(7200 + (Date.now() - started) / 1000)
    sealed.stop()
  })

  it('counts response cache outcomes, its entries and bytes', async () => {
    const cache = createResponseCache({ now: () => NOW, watermark: eventsWatermark(rt.runner) })
    const app = testApp(rt, { now: () => NOW, responseCache: cache })
    const before = await scrape(app)
    const outcomes: string[] = []
    for (const path of [`/insights/${U}/city?range=30d`, `/insights/${U}/city?range=30d`, `/insights/${U}/os?range=30d`, `/insights/${U}/live`]) {
      outcomes.push((await get(app, path)).headers.get('x-quarry-cache')!)
    }
    expect(outcomes).toEqual(['miss', 'hit', 'miss', 'bypass'])
    const after = await scrape(app)
    for (const outcome of ['miss', 'hit', 'bypass']) {
      expect(delta(before, after, 'quarry_response_cache_requests_total', { outcome })).toBe(outcomes.filter((o) => o === outcome).length)
    }
    expect(after.value('quarry_response_cache_entries')).toBe(2)
    expect(after.value('quarry_response_cache_bytes')).toBe(cache.lru.bytes)
  })

  it('counts rate-limit and admission refusals', async () => {
    const limited = testApp(rt, { now: () => NOW, config: { ...rt.config, QUARRY_RATE_LIMIT: 2, QUARRY_RATE_WINDOW_S: 3600 } })
    const before = await scrape(limited)
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) statuses.push((await get(limited, `/insights/${U}/live`)).status)
    expect(statuses).toEqual([200, 200, 429, 429, 429])

    // Admission allows 2 × (1 + 0) requests in progress: of 8 sent at once, the rest are refused.
    const narrow = testApp(rt, { now: () => NOW, config: { ...rt.config, QUARRY_MAX_CONCURRENT_QUERIES: 1, QUARRY_MAX_QUEUED_QUERIES: 0 } })
    const burst = await Promise.all(Array.from({ length: 8 }, () => get(narrow, `/insights/${U}/live`)))
    const refused = (await Promise.all(burst.map(async (r) => (r.status === 503 ? ((await r.json()) as { code: string }).code : undefined)))).filter(
      (code) => code === 'overloaded',
    ).length
    expect(refused).toBeGreaterThan(0)
    // /metrics is exempt: scraped here while the app refuses nothing, and below through the narrow app.
    const after = await scrape(narrow)
    expect(delta(before, after, 'quarry_rate_limit_refusals_total', { limit: 'client' })).toBe(3)
    expect(delta(before, after, 'quarry_admission_refusals_total', {})).toBe(refused)
  })

  it('counts exported rows and bytes by format', async () => {
    const app = testApp(rt, { now: () => NOW })
    const expected = events.filter((e) => e.project_id === U).length
    const before = await scrape(app)
    const window = 'start=2020-01-01T00:00:00Z&end=2030-01-01T00:00:00Z'
    const ndjson = await get(app, `/export/events?projectId=${U}&${window}&format=ndjson`)
    expect(ndjson.status).toBe(200)
    const body = new Uint8Array(await ndjson.arrayBuffer())
    const page = await get(app, `/export/events?projectId=${U}&${window}&limit=7`)
    expect(((await page.json()) as { data: unknown[] }).data).toHaveLength(7)
    const after = await scrape(app)
    expect(delta(before, after, 'quarry_export_rows_total', { format: 'ndjson' })).toBe(expected)
    expect(delta(before, after, 'quarry_export_bytes_total', { format: 'ndjson' })).toBe(body.byteLength)
    expect(delta(before, after, 'quarry_export_rows_total', { format: 'json' })).toBe(7)
    // The stream's end was logged in the request's context.
    const requestId = ndjson.headers.get('x-request-id')
    expect(logLines.filter((l) => l.msg === 'stream' && l.requestId === requestId)).toHaveLength(1)
  })

  it('wants the bearer token when QUARRY_METRICS_TOKEN is set, in the error envelope', async () => {
    const token = 'metrics-token-0123456789'
    const app = testApp(rt, { config: { ...rt.config, QUARRY_METRICS_TOKEN: token } })
    for (const auth of [undefined, 'Bearer wrong-token-0123456789', `Basic ${token}`]) {
      const res = await app.request(url('/metrics'), { headers: auth ? { Authorization: auth } : {} })
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"')
      const body = (await res.json()) as { code: string; requestId: string }
      expect(body.code).toBe('invalid_credentials')
      expect(body.requestId).toBe(res.headers.get('x-request-id'))
    }
    const ok = await scrape(app, { Authorization: `Bearer ${token}` })
    expect(ok.types.get('quarry_http_request_duration_seconds')).toBe('histogram')
    // OpenPanel's metrics route is another thing and still answers.
    expect((await get(app, `/insights/${U}/metrics?range=7d`)).status).toBe(200)
  })
})

describe('traces over OTLP/HTTP', () => {
  it('continues the incoming traceparent with a request span and one span per statement', async () => {
    const app = testApp(rt, { now: () => NOW })
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    const parentId = '00f067aa0ba902b7'
    const res = await get(app, `/insights/${U}/country?range=30d`, { traceparent: `00-${traceId}-${parentId}-01`, 'x-request-id': 'traced-request-1' })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-quarry-stats')).toBe('queries=1')
    await rt.tracing!.flush()

    expect(receiver.requests.every((r) => r.path === '/v1/traces' && r.contentType === 'application/x-protobuf')).toBe(true)
    const spans = receiver.spans.filter((s) => s.traceId === traceId)
    const request = spans.find((s) => s.kind === SPAN_KIND.SERVER)!
    expect(request).toBeDefined()
    expect(request.parentSpanId).toBe(parentId)
    expect(request.name).toBe('GET /insights/:projectId/country')
    expect(request.attributes).toMatchObject({ 'http.route': '/insights/:projectId/country', 'http.response.status_code': 200, 'quarry.request_id': 'traced-request-1' })
    expect(request.resource['service.name']).toBe('quarry-test')
    // Authentication's lookups (client, project) and the breakdown, each a child of the request.
    const statements = spans.filter((s) => s.kind === SPAN_KIND.CLIENT)
    expect(statements.map((s) => s.name).sort()).toEqual(['client_by_id', 'insights_breakdown:country', 'project_by_id'])
    expect(statements.every((s) => s.parentSpanId === request.spanId)).toBe(true)
    const breakdown = statements.find((s) => s.name === 'insights_breakdown:country')!
    expect(breakdown.attributes).toMatchObject({ 'db.system.name': 'clickhouse', 'quarry.statement': 'insights_breakdown:country' })
    expect(breakdown.attributes).not.toHaveProperty('quarry.rows_read')
    expect(request.attributes).toMatchObject({ 'quarry.queries': 1 })

    // Never a bound value or a secret: no attribute names the project, the client or its secret.
    const values = spans.flatMap((s) => Object.values(s.attributes).map(String))
    expect(values.filter((v) => v.includes(U) || v.includes(root.secret) || v.includes(root.id))).toEqual([])
  })

  it('starts a trace of its own without a traceparent', async () => {
    const app = testApp(rt, { now: () => NOW })
    const res = await get(app, `/insights/${U}/device?range=30d`, { 'x-request-id': 'untraced-request-2' })
    expect(res.status).toBe(200)
    await rt.tracing!.flush()
    const request = receiver.spans.find((s) => s.attributes['quarry.request_id'] === 'untraced-request-2')!
    expect(request.parentSpanId).toBe('')
    const children = receiver.spans.filter((s) => s.parentSpanId === request.spanId)
    expect(children.map((s) => s.name)).toContain('insights_breakdown:device')
    expect(children.every((s) => s.kind === SPAN_KIND.CLIENT && s.traceId === request.traceId)).toBe(true)
  })

  it('makes no span for probes and scrapes, even with a traceparent', async () => {
    const app = testApp(rt, { now: () => NOW })
    const traceId = '5cf92f3577b34da6a3ce929d0e0e4736'
    const headers = { traceparent: `00-${traceId}-00f067aa0ba902b7-01` }
    for (const path of ['/healthz', '/healthz/live', '/healthz/ready', '/metrics']) expect((await get(app, path, headers)).status).toBe(200)
    // A request that is traced, in the same trace, shows the exporter had the chance to send.
    expect((await get(app, `/insights/${U}/live`, headers)).status).toBe(200)
    await rt.tracing!.flush()
    const spans = receiver.spans.filter((s) => s.traceId === traceId && s.kind === SPAN_KIND.SERVER)
    expect(spans.map((s) => s.attributes['http.route'])).toEqual(['/insights/:projectId/live'])
  })
})

describe('logs', () => {
  it('carries the request id, and the trace id, on every line the request causes', async () => {
    const app = testApp(rt, { now: () => NOW })
    const from = logLines.length
    const traceId = 'aaf92f3577b34da6a3ce929d0e0e4736'
    const res = await get(app, `/insights/${U}/browser?range=30d`, { 'x-request-id': 'logged-request-3', traceparent: `00-${traceId}-00f067aa0ba902b7-01` })
    expect(res.status).toBe(200)
    const lines = logLines.slice(from)
    const queries = lines.filter((l) => l.msg === 'query' && l.query === 'insights_breakdown:browser')
    expect(queries).toHaveLength(1)
    expect(lines.length).toBeGreaterThanOrEqual(2)
    for (const line of lines) expect(line).toMatchObject({ requestId: 'logged-request-3', traceId })
    expect(lines.some((l) => l.msg === 'request')).toBe(true)
  })

  it('is human-readable on a terminal and JSON elsewhere', () => {
    const terminal = Object.assign(new PassThrough(), { isTTY: true }) as unknown as NodeJS.WriteStream
    let text = ''
    ;(terminal as unknown as PassThrough).on('data', (d: Buffer) => (text += d.toString()))
    createLogger('info', logDestination(terminal)).info({ requestId: 'r-1' }, 'listening')
    const plain = text.replace(/\x1b\[[0-9;]*m/g, '')
    expect(plain).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: listening\n\s+requestId: "r-1"\n$/)
    expect(() => JSON.parse(text)).toThrow()
    const pipe = new PassThrough() as unknown as NodeJS.WriteStream
    expect(logDestination(pipe)).toBe(pipe)
  })
})
