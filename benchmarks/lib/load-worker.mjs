// Load generator, run as a separate process so that its event loop and buffers are not the
// server's. Reads a JSON job on stdin, writes one JSON result on stdout.
//   job: { urls, headers, concurrency, mode: 'shared' | 'stampede', durationMs, maxRequests, seed }
//   shared:   every client takes the next URL of the list (round robin) until durationMs or maxRequests.
//   stampede: every client requests every URL once, each client in its own shuffled order.
import { agent, get } from './http.mjs'

const job = JSON.parse(await new Promise((resolve) => {
  let text = ''
  process.stdin.on('data', (d) => (text += d))
  process.stdin.on('end', () => resolve(text))
}))

let state = job.seed ?? 1
const random = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648)
const shuffled = (list) => {
  const a = [...list]
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[a[i], a[j]] = [a[j], a[i]]
  }
  return a
}

const keepAlive = agent(job.concurrency)
const latencies = []
const statuses = {}
const cache = {}
const errors = []
let next = 0
const started = performance.now()
const deadline = started + (job.durationMs ?? Infinity)
const max = job.maxRequests ?? Infinity

async function one(url) {
  const r = await get(url, job.headers, keepAlive)
  latencies.push(r.ms)
  statuses[r.status] = (statuses[r.status] ?? 0) + 1
  const how = r.headers['x-quarry-cache'] ?? 'none'
  cache[how] = (cache[how] ?? 0) + 1
  if (r.status !== 200 && r.status !== 304 && errors.length < 5) errors.push({ status: r.status, body: r.body.toString().slice(0, 300), error: r.error })
}

async function client(index) {
  if (job.mode === 'stampede') {
    for (const url of shuffled(job.urls)) await one(url)
    return
  }
  while (performance.now() < deadline && next < max) {
    const url = job.urls[next++ % job.urls.length]
    await one(url)
  }
}

await Promise.all(Array.from({ length: job.concurrency }, (_, i) => client(i)))
const elapsedMs = performance.now() - started
keepAlive.destroy()
process.stdout.write(JSON.stringify({ elapsedMs, latencies, statuses, cache, errors }))
