// The load generator the issue names (autocannon), run as a process of its own like load-worker.mjs:
// it writes requests on raw sockets and counts responses without building them into strings, so a
// larger body costs the generator little and the server is what is measured. Reads a JSON job on
// stdin, writes one JSON result on stdout.
//   job: { urls (one origin), headers, concurrency, durationMs }
//   result: { elapsedMs, requests, statuses, latency: { p50, p99 } (ms), errors, timeouts, cpuUs }
import autocannon from 'autocannon'

const job = JSON.parse(await new Promise((resolve) => {
  let text = ''
  process.stdin.on('data', (d) => (text += d))
  process.stdin.on('end', () => resolve(text))
}))

const urls = job.urls.map((u) => new URL(u))
const cpu = process.cpuUsage()
const started = performance.now()
// Each connection walks the list in order, so every URL is asked as often as the others.
const r = await autocannon({
  url: urls[0].origin,
  connections: job.concurrency,
  duration: job.durationMs / 1000,
  headers: job.headers,
  requests: urls.map((u) => ({ method: 'GET', path: u.pathname + u.search })),
})
const used = process.cpuUsage(cpu)
const statuses = Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, s]) => [code, s.count]))
process.stdout.write(JSON.stringify({
  elapsedMs: performance.now() - started,
  requests: Object.values(statuses).reduce((a, b) => a + b, 0),
  statuses,
  latency: { p50: r.latency.p50, p99: r.latency.p99 },
  errors: r.errors,
  timeouts: r.timeouts,
  cpuUs: used.user + used.system,
}))
