/**
 * What OpenPanel's newer web-traffic routes (overview, pages/top, pages/performance,
 * pages/entry_exit, traffic/*) cost beside the routes whose statements they restate (/metrics,
 * /pages, the breakdowns), in one process on a freshly seeded project whose page rollups and
 * sealed history are built as `quarry serve` builds them, without the response cache. Each group's
 * requests are interleaved round by round (the order rotating), so load from elsewhere on the
 * machine weighs on both sides of a ratio alike.
 *   npx tsx benchmarks/traffic-latency.ts [--events 1000000] [--runs 9] [--dir DIR]
 * With --dir the data directory is kept, and a project seeded there before is reused.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { buildApp } from '../src/app.ts'
import { createClientRow } from '../src/auth/clients.ts'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/log.ts'
import { createProject, findProject } from '../src/projects.ts'
import { openRuntime } from '../src/runtime.ts'
import { seedProject } from '../src/seed/seed.ts'

const { values } = parseArgs({ options: { events: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '9' }, dir: { type: 'string' } } })
const runs = Number(values.runs)
const dir = values.dir ?? mkdtempSync(join(tmpdir(), 'quarry-traffic-bench-'))
const config = loadConfig({ ...process.env, QUARRY_DATA_DIR: dir, QUARRY_DEMO: '0', LOG_LEVEL: 'warn', QUARRY_RATE_LIMIT: '1000000' })
const rt = await openRuntime(config, createLogger('warn'))
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const round1 = (x: number) => Math.round(x * 10) / 10

try {
  const project = { id: 'bench', timezone: 'UTC' }
  const load = { start: loadavg()[0]!.toFixed(1), end: '' }
  let started = performance.now()
  let seedMs: number | null = null
  if (!(await findProject(rt.runner, project.id))) {
    await createProject(rt.runner, { ...project, name: 'bench', organizationId: 'default' })
    await seedProject(rt.runner, { projectId: project.id, events: Number(values.events), days: 30, seed: 1, end: new Date() })
    seedMs = Math.round(performance.now() - started)
  }
  started = performance.now()
  await rt.sealed?.build(project.id)
  const buildMs = performance.now() - started
  const client = await createClientRow(rt.runner, { type: 'root', projectId: null, organizationId: 'default', name: 'bench' })
  const app = buildApp({ config, runner: rt.runner, logger: rt.logger, signingKey: rt.signingKey, sealed: rt.sealed, metrics: false })
  const headers = { 'openpanel-client-id': client.id, 'openpanel-client-secret': client.secret }

  /** [base route, the routes restating it]; every request over the 30-day window. */
  const GROUPS: string[][] = [
    ['metrics?range=30d&interval=day', 'overview?range=30d'],
    ['pages?range=30d&limit=1000', 'pages/top?range=30d', 'pages/performance?range=30d'],
    ['entry_page?range=30d&limit=1000', 'pages/entry_exit?range=30d'],
    ['referrer_name?range=30d&limit=1000', 'traffic/referrers?range=30d'],
    ['country?range=30d&limit=1000', 'traffic/geo?range=30d'],
    ['browser?range=30d&limit=1000', 'traffic/devices?range=30d&breakdown=browser'],
  ]
  const time = async (route: string) => {
    const t = performance.now()
    const res = await app.request(`http://bench/insights/${project.id}/${route}`, { headers })
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`${route}: ${res.status}`)
    const via = res.headers.has('x-quarry-rollup') ? 'page rollup' : res.headers.has('x-quarry-sealed-until') ? 'sealed history' : 'events'
    return { ms: performance.now() - t, db: Number(/db;dur=([\d.]+)/.exec(res.headers.get('server-timing') ?? '')?.[1] ?? 0), via }
  }
  const groups = []
  for (const group of GROUPS) {
    const samples = new Map(group.map((r) => [r, [] as { ms: number; db: number; via: string }[]]))
    for (const route of group) for (let i = 0; i < 2; i++) await time(route)
    for (let round = 0; round < runs; round++) {
      for (let k = 0; k < group.length; k++) {
        const route = group[(round + k) % group.length]!
        samples.get(route)!.push(await time(route))
      }
    }
    const base = samples.get(group[0]!)!
    const rows = group.map((route) => {
      const s = samples.get(route)!
      return {
        route,
        via: s[0]!.via,
        median_ms: round1(median(s.map((x) => x.ms))),
        db_median_ms: round1(median(s.map((x) => x.db))),
        ratio_to_base: +median(s.map((x, i) => x.ms / base[i]!.ms)).toFixed(2),
      }
    })
    console.log(rows)
    groups.push(rows)
  }
  load.end = loadavg()[0]!.toFixed(1)
  const report = { machine: { cores: cpus().length, load_average_1m: load }, engine: rt.engine.mode, events: Number(values.events), runs, seed_ms: seedMs, rollup_and_sealed_build_ms: Math.round(buildMs), groups }
  writeFileSync(new URL('./results/traffic-latency.json', import.meta.url), `${JSON.stringify(report, null, 2)}\n`)
} finally {
  await rt.close()
  if (!values.dir) rmSync(dir, { recursive: true, force: true })
}
