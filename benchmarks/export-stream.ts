/**
 * Export throughput and memory of GET /export/events?format=csv|ndjson|parquet|arrow over real HTTP.
 * Seeds N events (default 10M) with INSERT … SELECT FROM numbers() into a fresh embedded engine in
 * a temporary directory, starts the server with listen(), downloads each export with curl (or fetch) from a
 * child process while sampling this (the server's) RSS — chDB runs in this process, so
 * ClickHouse's memory counts too — and writes benchmarks/results/export-stream-<rows>.json.
 * Parquet and Arrow files go to disk; once timed, DuckDB and apache-arrow count their rows.
 *   npx tsx benchmarks/export-stream.ts [--rows 10000000] [--keep] [--dir <kept data directory>]
 *     [--cases csv,csv+gzip,csv+zstd,ndjson,parquet,arrow] (names up to the first space; default all) [--out <file name>]
 *     [--client curl|fetch] [--sink <directory for the body, default the data directory>]
 * The client is curl writing the body to a file (rows counted after the timing), or a Node process
 * reading it with fetch (lines counted as they come). Both share the two cores with the server:
 * fetch spends 1.4 µs of CPU per Arrow row (1.9 GB through web streams), as much as the server, where
 * curl spends a fraction of that (see benchmarks/README.md, Export, 27 Nov). The body goes to the
 * disk the engine reads from unless `--sink` names another place (/dev/shm: memory), so that the
 * client's writes and their writeback do not share the server's disk.
 */
import { execFileSync, spawn } from 'node:child_process'
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { DuckDBInstance } from '@duckdb/node-api'
import { RecordBatchReader } from 'apache-arrow'
import { buildApp } from '../src/app.ts'
import { createClientRow } from '../src/auth/clients.ts'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/log.ts'
import { createProject } from '../src/projects.ts'
import { openRuntime } from '../src/runtime.ts'
import { listen } from '../src/server.ts'

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000000' },
    keep: { type: 'boolean', default: false },
    dir: { type: 'string' },
    cases: { type: 'string' },
    out: { type: 'string' },
    client: { type: 'string', default: 'curl' },
    sink: { type: 'string' },
  },
})
if (values.client !== 'curl' && values.client !== 'fetch') throw new Error('--client: curl or fetch')
const ROWS = Number(values.rows)
const CHUNK = 1_000_000
const SPAN_MS = 28 * 86_400_000
const MB = 1024 * 1024
const NOW = new Date()
const chInstant = (d: Date) => d.toISOString().replace('T', ' ').replace('Z', '')

const dir = values.dir ?? mkdtempSync(join(tmpdir(), 'quarry-export-bench-'))
const config = loadConfig({ ...process.env, QUARRY_DATA_DIR: dir, QUARRY_DEMO: '0', LOG_LEVEL: 'warn', QUARRY_RATE_LIMIT: '1000000' })
const rt = await openRuntime(config, createLogger('warn'))
const existing = values.dir
  ? ((await rt.runner.rows<{ n: number }>({ name: 'existing', sql: "SELECT count() AS n FROM events WHERE project_id = 'bench'", params: {} }, { timeoutS: 60 }))[0]?.n ?? 0)
  : 0
if (existing === 0) await createProject(rt.runner, { id: 'bench', name: 'Bench', timezone: 'UTC', organizationId: 'bench' })
const client = await createClientRow(rt.runner, { type: 'read', projectId: 'bench', organizationId: 'bench', name: 'bench' })
const headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }

const seedStarted = performance.now()
for (let offset = existing > 0 ? ROWS : 0; offset < ROWS; offset += CHUNK) {
  await rt.runner.command({
    name: 'bench_events',
    sql: `INSERT INTO events (id, name, device_id, profile_id, project_id, session_id, created_at, path, origin,
            referrer, referrer_name, referrer_type, duration, properties, country, city, region, longitude, latitude,
            os, os_version, browser, browser_version, device, brand, model, sdk_name, sdk_version)
          SELECT
            generateUUIDv4(number),
            ['screen_view', 'screen_view', 'screen_view', 'click', 'purchase'][1 + cityHash64(number, 1) % 5],
            concat('dev-', toString(cityHash64(number, 2) % 200000)) AS device,
            if(number % 3 = 0, concat('user-', toString(cityHash64(number, 2) % 50000)), device),
            'bench',
            concat('ses-', toString(intDiv(number, 7))),
            {end:DateTime64(3, 'UTC')} - toIntervalMillisecond(1 + intDiv(number * {span:UInt64}, {rows:UInt64})),
            concat('/docs/', toString(cityHash64(number, 3) % 2000)),
            'https://example.com',
            ['', 'https://google.com/', 'https://news.ycombinator.com/'][1 + cityHash64(number, 4) % 3],
            ['', 'Google', 'Hacker News'][1 + cityHash64(number, 4) % 3],
            ['', 'search', 'social'][1 + cityHash64(number, 4) % 3],
            cityHash64(number, 5) % 60000,
            map('__title', concat('Page ', toString(cityHash64(number, 3) % 2000)),
                '__query.utm_source', ['', 'google', 'newsletter'][1 + cityHash64(number, 6) % 3],
                'plan', ['free', 'pro', 'team'][1 + cityHash64(number, 6) % 3]),
            ['US', 'SE', 'DE', 'FR', 'GB'][1 + cityHash64(number, 7) % 5],
            ['New York', 'Stockholm', 'Berlin', 'Paris', 'London'][1 + cityHash64(number, 7) % 5],
            ['NY', 'AB', 'BE', 'IDF', 'ENG'][1 + cityHash64(number, 7) % 5],
            toFloat32((cityHash64(number, 8) % 36000) / 100 - 180),
            toFloat32((cityHash64(number, 9) % 18000) / 100 - 90),
            ['iOS', 'Android', 'Windows', 'macOS'][1 + cityHash64(number, 10) % 4],
            ['17.4', '14', '11', '14.3'][1 + cityHash64(number, 10) % 4],
            ['Safari', 'Chrome', 'Firefox'][1 + cityHash64(number, 11) % 3],
            ['17.4', '122.0', '123.0'][1 + cityHash64(number, 11) % 3],
            ['mobile', 'desktop', 'tablet'][1 + cityHash64(number, 12) % 3],
            ['Apple', 'Samsung', 'Google'][1 + cityHash64(number, 12) % 3],
            ['iPhone', 'Galaxy S24', 'Pixel 8'][1 + cityHash64(number, 12) % 3],
            'web', '1.2.3'
          FROM numbers({offset:UInt64}, {count:UInt64})`,
    params: { end: chInstant(NOW), span: SPAN_MS, rows: ROWS, offset, count: Math.min(CHUNK, ROWS - offset) },
  })
  process.stdout.write(`\rseeded ${Math.min(offset + CHUNK, ROWS).toLocaleString()} events`)
}
if (existing === 0) await rt.runner.command({
  name: 'bench_profiles',
  sql: `INSERT INTO profiles (id, project_id, is_external, first_name, last_name, email, properties, created_at, last_seen_at)
        SELECT concat('user-', toString(number)), 'bench', true, 'First', 'Last', concat('user', toString(number), '@example.com'),
               map('tier', 'gold'), now64(3) - toIntervalDay(60), now64(3)
        FROM numbers(50000)`,
  params: {},
})
if (existing === 0) await rt.runner.command({
  name: 'bench_meta',
  sql: `INSERT INTO event_meta (project_id, name, conversion, color, icon) VALUES ('bench', 'purchase', true, 'green', 'cart')`,
  params: {},
})
const seedSeconds = (performance.now() - seedStarted) / 1000
// Let background merges finish, so they are not measured as the export's memory or time.
for (let waited = 0; waited < 300; waited++) {
  const [merging] = (await rt.runner.rows<{ n: number }>(
    { name: 'merges', sql: "SELECT count() AS n FROM system.merges WHERE table = 'events'", params: {} },
    { timeoutS: 10 },
  )) as [{ n: number }]
  if (merging.n === 0) break
  await new Promise((r) => setTimeout(r, 1000))
}
const parts = await rt.runner.rows<{ partition: string; parts: number; rows: number }>(
  { name: 'parts', sql: "SELECT partition, count() AS parts, sum(rows) AS rows FROM system.parts WHERE table = 'events' AND active GROUP BY partition ORDER BY partition", params: {} },
  { timeoutS: 10 },
)
const [{ count }] = (await rt.runner.rows<{ count: number }>(
  { name: 'count', sql: "SELECT count() AS count FROM events WHERE project_id = 'bench'", params: {} },
  { timeoutS: 600 },
)) as [{ count: number }]
console.log(`\n${count.toLocaleString()} events seeded in ${seedSeconds.toFixed(1)} s`)

const server = await listen(buildApp({ config, runner: rt.runner, logger: rt.logger, signingKey: rt.signingKey }), '127.0.0.1', 0)
const base = `http://127.0.0.1:${server.port}/export/events`

interface Case {
  name: string
  query: string
  encoding?: string
  /** A binary format: saved to a file, its rows counted by an independent reader after the timing. */
  rows?: (path: string) => Promise<number>
}

const parquetRows = async (path: string) => {
  const db = await DuckDBInstance.create(':memory:')
  const conn = await db.connect()
  try {
    const [row] = (await conn.runAndReadAll(`SELECT count(*) AS n FROM read_parquet('${path}')`)).getRowObjectsJS()
    return Number(row!.n)
  } finally {
    conn.closeSync()
    db.closeSync()
  }
}
const arrowRows = async (path: string) => {
  let n = 0
  for await (const batch of await RecordBatchReader.from(createReadStream(path))) n += batch.numRows
  return n
}

const ALL_CASES: Case[] = [
  { name: 'csv', query: 'format=csv' },
  { name: 'ndjson', query: 'format=ndjson' },
  { name: 'ndjson +properties,geo,device,referrer', query: 'format=ndjson&includes=properties,geo,device,referrer' },
  { name: 'ndjson +profile,meta (joins)', query: 'format=ndjson&includes=profile,meta' },
  // fetch decodes gzip and counts the lines; curl saves the body as sent.
  {
    name: 'csv+gzip (Accept-Encoding)',
    query: 'format=csv',
    encoding: 'gzip',
    ...(values.client === 'curl' ? { rows: async (path: string) => Number(execFileSync('sh', ['-c', 'gzip -dc "$0" | wc -l', path]).toString()) - 1 } : {}),
  },
  // Node 20's fetch does not decode zstd: the body is saved as it came and Debian's zstd counts its lines.
  { name: 'csv+zstd (Accept-Encoding)', query: 'format=csv', encoding: 'zstd', rows: async (path) => Number(execFileSync('sh', ['-c', 'zstd -dc "$0" | wc -l', path]).toString()) - 1 },
  { name: 'parquet', query: 'format=parquet', rows: parquetRows },
  { name: 'parquet +properties,geo,device,referrer', query: 'format=parquet&includes=properties,geo,device,referrer', rows: parquetRows },
  { name: 'arrow', query: 'format=arrow', rows: arrowRows },
  { name: 'arrow +properties,geo,device,referrer', query: 'format=arrow&includes=properties,geo,device,referrer', rows: arrowRows },
]
const chosen = values.cases?.split(',').map((c) => c.trim())
const cases = chosen ? ALL_CASES.filter((c) => chosen.includes(c.name.split(' ')[0]!)) : ALL_CASES

/** The client: another process, so its buffers are not counted as the server's memory. */
const CLIENT = `
import { openSync, writeSync, closeSync } from 'node:fs'
const [url, headers, file] = [process.argv[1], JSON.parse(process.argv[2]), process.argv[3]]
const fd = file ? openSync(file, 'w') : undefined
const started = performance.now()
const res = await fetch(url, { headers })
let firstByteMs = 0, bytes = 0, lines = 0, peak = 0
for await (const chunk of res.body) {
  if (bytes === 0) firstByteMs = performance.now() - started
  bytes += chunk.byteLength
  if (fd !== undefined) writeSync(fd, chunk)
  else for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++
  peak = Math.max(peak, process.memoryUsage.rss())
}
if (fd !== undefined) closeSync(fd)
const cpu = process.cpuUsage()
process.stdout.write(JSON.stringify({ status: res.status, firstByteMs, bytes, lines, seconds: (performance.now() - started) / 1000, clientRss: peak, clientCpuS: (cpu.user + cpu.system) / 1e6 }))
`

function download(url: string, requestHeaders: Record<string, string>, file?: string) {
  return new Promise<{ status: number; firstByteMs: number; bytes: number; lines: number; seconds: number; clientRss: number; clientCpuS: number }>((resolve, reject) => {
    const args = ['--input-type=module', '-e', CLIENT, url, JSON.stringify(requestHeaders), ...(file ? [file] : [])]
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`client exited with ${code}`))))
  })
}

/**
 * curl saves the body as it came (no decoding) and bash's `times` reports its CPU time; the text
 * formats' lines are counted from the file after the timing.
 */
function curlDownload(url: string, requestHeaders: Record<string, string>, file: string) {
  const script = 'curl -sS -o "$1" -w "%{http_code} %{size_download} %{time_starttransfer} %{time_total}" "${@:2}"; echo; times'
  const args = ['-c', script, 'bash', file, url, ...Object.entries(requestHeaders).flatMap(([k, v]) => ['-H', `${k}: ${v}`])]
  return new Promise<{ status: number; firstByteMs: number; bytes: number; lines: number; seconds: number; clientRss: number; clientCpuS: number }>((resolve, reject) => {
    const child = spawn('bash', args, { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.on('error', reject)
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`curl exited with ${code}`))
      const [line, , children] = out.trim().split('\n') as [string, string, string]
      const [status, bytes, firstByte, total] = line.split(' ').map(Number) as [number, number, number, number]
      // `times`: the shell's user and system time, then its children's (curl's), as 0m1.234s.
      const seconds = (children.match(/(\d+)m([\d.]+)s/g) ?? []).reduce((sum, t) => {
        const [, m, sec] = /(\d+)m([\d.]+)s/.exec(t)!
        return sum + Number(m) * 60 + Number(sec)
      }, 0)
      resolve({ status, firstByteMs: firstByte * 1000, bytes, lines: 0, seconds: total, clientRss: 0, clientCpuS: seconds })
    })
  })
}

const countLines = (path: string) => Number(execFileSync('sh', ['-c', 'wc -l < "$0"', path]).toString())

const startRss = process.memoryUsage.rss()
const results = []
for (const c of cases) {
  await new Promise((r) => setTimeout(r, 1000))
  const baseline = process.memoryUsage.rss()
  let peak = baseline
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20)
  const cpuBefore = process.cpuUsage()
  // fetch decodes gzip; the counted bytes are the decoded export (zstd's, and curl's, as sent).
  const file = c.rows || values.client === 'curl' ? join(values.sink ?? dir, 'export.out') : undefined
  const requestHeaders = { ...headers, 'accept-encoding': c.encoding ?? 'identity' }
  const d = values.client === 'curl' ? await curlDownload(`${base}?${c.query}`, requestHeaders, file!) : await download(`${base}?${c.query}`, requestHeaders, file)
  clearInterval(sampler)
  const cpu = process.cpuUsage(cpuBefore)
  if (d.status !== 200) throw new Error(`${c.name}: ${d.status}`)
  const lines = values.client === 'curl' && !c.rows ? countLines(file!) : d.lines
  const rows = c.rows ? await c.rows(file!) : c.query.includes('csv') ? lines - 1 : lines
  if (file) rmSync(file)
  if (rows !== count) throw new Error(`${c.name}: ${rows} rows, expected ${count}`)
  const result = {
    case: c.name,
    rows,
    mb: +(d.bytes / MB).toFixed(1),
    seconds: +d.seconds.toFixed(2),
    first_byte_ms: Math.round(d.firstByteMs),
    rows_per_s: Math.round(rows / d.seconds),
    mb_per_s: +(d.bytes / MB / d.seconds).toFixed(1),
    server_rss_before_mb: Math.round(baseline / MB),
    server_rss_peak_mb: Math.round(peak / MB),
    server_rss_growth_mb: Math.round((peak - baseline) / MB),
    ...(values.client === 'fetch' ? { client_rss_peak_mb: Math.round(d.clientRss / MB) } : {}),
    // CPU time per row, the server's (chDB included) and the client's: the shared machine's load
    // stretches wall time far more than it does these.
    server_cpu_us_per_row: +(((cpu.user + cpu.system) / rows)).toFixed(3),
    client_cpu_us_per_row: +((d.clientCpuS * 1e6) / rows).toFixed(3),
    load_1m: +loadavg()[0]!.toFixed(2),
  }
  results.push(result)
  console.log(result)
}

const report = {
  date: new Date().toISOString(),
  machine: { cores: cpus().length, cpu: cpus()[0]?.model, memory_gb: Math.round(totalmem() / 2 ** 30), node: process.version },
  engine: rt.engine.mode,
  client: values.client,
  events: count,
  seed_seconds: +seedSeconds.toFixed(1),
  parts,
  rss_after_seed_mb: Math.round(startRss / MB),
  load_average: loadavg().map((l) => +l.toFixed(2)),
  note:
    `Server RSS includes chDB (in process); the client is ${values.client === 'curl' ? 'curl writing the body to a file (bytes as sent)' : 'a separate node process using fetch (bytes decoded)'}. ` +
    'Parquet and Arrow bodies are written to a file by the client and their rows counted afterwards (DuckDB, apache-arrow). ' +
    'The machine has 2 cores shared with other engineers running tests: see load_average.',
  results,
}
const out = new URL(`./results/${values.out ?? `export-stream-${ROWS >= 1_000_000 ? `${ROWS / 1_000_000}M` : ROWS}`}.json`, import.meta.url)
writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`)
console.log(`written ${out.pathname}`)
await server.shutdown(1000)
await rt.close()
if (!values.keep && !values.dir) rmSync(dir, { recursive: true, force: true })
else console.log(`data kept in ${dir}`)
