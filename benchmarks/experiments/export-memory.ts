/**
 * Where an export's memory goes: one streamed NDJSON export of a project's events (all of them),
 * read by a consumer that takes the bytes at a fixed rate (as a client on a slow link does) or as
 * fast as they come, while this process's memory is sampled. chDB runs in this process, so its
 * memory is in the RSS; the JavaScript part of it is reported apart (array buffers, heap).
 *
 *   npx tsx benchmarks/experiments/export-memory.ts --dir D [--project bench]
 *     [--includes properties,geo,device,referrer] [--rate-mbps 60] [--settings '{"max_threads":1}']
 *
 * `--settings` adds ClickHouse settings to the export's statement, to try a lever without editing
 * Quarry. The directory of `export-stream.ts --keep` has a 10M-event project `bench`.
 */
import { DateTime } from 'luxon'
import { parseArgs } from 'node:util'
import { configSchema } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import { exportEventsStatement, resolveIncludes } from '../../src/query/export-events.ts'
import { openRuntime } from '../../src/runtime.ts'

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    project: { type: 'string', default: 'bench' },
    includes: { type: 'string', default: 'properties,geo,device,referrer' },
    'rate-mbps': { type: 'string', default: '0' },
    settings: { type: 'string', default: '{}' },
    'sample-s': { type: 'string', default: '5' },
  },
})
if (!values.dir) throw new Error('--dir is required')
const MB = 2 ** 20
const rate = Number(values['rate-mbps'])
const extra = JSON.parse(values.settings!) as Record<string, string | number>

const config = configSchema.parse({ QUARRY_DATA_DIR: values.dir, QUARRY_DEMO: '0', LOG_LEVEL: 'warn' })
const rt = await openRuntime(config, createLogger('warn'))
const [span] = await rt.runner.rows<{ first: string; last: string }>(
  {
    name: 'export_memory_span',
    sql: `SELECT toString(min(created_at)) AS first, toString(max(created_at) + toIntervalMillisecond(1)) AS last
          FROM events WHERE project_id = {project:String}`,
    params: { project: values.project },
  },
  { timeoutS: 120 },
)
const instant = (text: string) => DateTime.fromSQL(text, { zone: 'UTC' })
const statement = exportEventsStatement({
  projectId: values.project!,
  window: { from: instant(span!.first), to: instant(span!.last), timezone: 'UTC' },
  events: [],
  filters: [],
  fields: resolveIncludes(values.includes || undefined).fields,
  format: 'ndjson',
})
statement.settings = { ...statement.settings, ...extra }

// Let the opening queries' garbage go before the baseline is taken.
await new Promise((resolve) => setTimeout(resolve, 1000))
const start = process.memoryUsage()
const peak = { rss: start.rss, arrayBuffers: 0, heapUsed: 0 }
const sampler = setInterval(() => {
  const m = process.memoryUsage()
  peak.rss = Math.max(peak.rss, m.rss)
  peak.arrayBuffers = Math.max(peak.arrayBuffers, m.arrayBuffers)
  peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed)
}, 20)
const curve: number[] = []
const curveSampler = setInterval(() => curve.push(Math.round((process.memoryUsage.rss() - start.rss) / MB)), Number(values['sample-s']) * 1000)

const started = performance.now()
let bytes = 0
let rows = 0
for await (const chunk of rt.runner.stream(statement, 'JSONEachRow', { timeoutS: 3600 })) {
  bytes += chunk.byteLength
  for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows++
  if (rate > 0) {
    const due = started + (bytes / MB / rate) * 1000
    const wait = due - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
  }
}
const seconds = (performance.now() - started) / 1000
clearInterval(sampler)
clearInterval(curveSampler)
await rt.close()

console.log(
  JSON.stringify({
    project: values.project,
    includes: values.includes,
    settings: extra,
    rate_mbps: rate,
    rows,
    mb: Math.round(bytes / MB),
    seconds: +seconds.toFixed(1),
    rss_start_mb: Math.round(start.rss / MB),
    rss_growth_peak_mb: Math.round((peak.rss - start.rss) / MB),
    rss_growth_curve_mb: curve,
    js_array_buffers_peak_mb: Math.round(peak.arrayBuffers / MB),
    js_heap_peak_mb: Math.round(peak.heapUsed / MB),
  }),
)
