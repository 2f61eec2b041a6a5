/**
 * How long the explorer takes to draw the demo's 30-day view, measured by Debian's chromium:
 * from navigation start to the moment every widget is drawn (the page's `quarry:complete` mark),
 * signing in by the demo link as a newcomer would. Runs on the first-run demo (1M events over 30
 * days, seed 1) served as `quarry serve` serves it: page rollups, sealed history, response cache.
 *
 *   npx tsx benchmarks/explorer.ts [--runs 9] [--screenshot benchmarks/results/explorer.png]
 *
 * The rollups are built first, as the first run does before it prints the link. Then two servers
 * on the one runtime, navigations interleaved, each in a fresh browser context: "served" (response
 * cache on, as `quarry serve`; a 30-day window's entries live 5 s, so most navigations miss) and
 * "no cache" (every widget's queries run). Writes results/explorer.json and a screenshot.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { buildApp } from '../src/app.ts'
import { createClientRow } from '../src/auth/clients.ts'
import { seedWithProject } from '../src/cli/seed.ts'
import { configSchema } from '../src/config.ts'
import { createResponseCache } from '../src/http/cache/middleware.ts'
import { eventsWatermark } from '../src/http/cache/watermark.ts'
import { createLogger } from '../src/log.ts'
import { findProject } from '../src/projects.ts'
import { explorerAssets } from '../src/routes/explorer.ts'
import { openRuntime } from '../src/runtime.ts'
import { listen } from '../src/server.ts'
import { explorerLink } from '../src/web/link.ts'
import { launchChromium } from '../test/helpers/browser.ts'

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '9' },
    screenshot: { type: 'string', default: 'benchmarks/results/explorer.png' },
    // A data directory kept between runs (seeded once); by default a temporary one, removed after.
    dir: { type: 'string' },
  },
})
const RUNS = Number(values.runs)
const load0 = loadavg()[0]

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

const dir = values.dir ?? mkdtempSync(join(tmpdir(), 'quarry-explorer-bench-'))
const config = configSchema.parse({ LOG_LEVEL: 'error', QUARRY_DEMO: '0', QUARRY_DATA_DIR: dir, QUARRY_RATE_LIMIT: '100000' })
const rt = await openRuntime(config, createLogger('error'))
try {
  let started = performance.now()
  const seeded = (await findProject(rt.runner, 'demo')) !== undefined
  if (!seeded) await seedWithProject(rt, { projectId: 'demo', events: 1_000_000, days: 30, seed: 1, end: new Date() })
  const seedS = seeded ? null : (performance.now() - started) / 1000
  console.log(seeded ? `the demo is in ${dir} already` : `seeded the demo in ${seedS!.toFixed(1)} s`)
  const client = await createClientRow(rt.runner, { type: 'read', projectId: 'demo', organizationId: 'default', name: 'demo' })
  await explorerAssets()

  const common = { config, runner: rt.runner, logger: rt.logger, signingKey: rt.signingKey, sealed: rt.sealed }
  const cache = createResponseCache({ now: () => new Date(), watermark: eventsWatermark(rt.runner, config.QUARRY_QUERY_TIMEOUT_S) }, { maxBytes: 64 * 2 ** 20 })
  const served = await listen(buildApp({ ...common, responseCache: cache }), '127.0.0.1', 0)
  const uncached = await listen(buildApp({ ...common, responseCache: false }), '127.0.0.1', 0)
  const browser = await launchChromium()

  /** One navigation in a fresh context (cold sessionStorage and HTTP cache): ms to every widget drawn. */
  const navigate = async (port: number, screenshot?: string) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(`${explorerLink(`http://127.0.0.1:${port}`, client, 'demo').replace('?project=demo', '?project=demo&range=30d')}`)
    await page.waitForFunction(() => document.documentElement.dataset.complete === 'true', null, { timeout: 60_000 })
    const ms = await page.evaluate(() => performance.getEntriesByType('mark').find((m) => m.name.startsWith('quarry:complete'))!.startTime)
    const states = await page.$$eval('[data-widget]', (els) => els.map((e) => `${e.getAttribute('data-widget')} ${e.getAttribute('data-state')} ${e.querySelector('.error')?.textContent ?? ''}`))
    if (states.some((s) => !s.includes(' ready ')) || errors.length) throw new Error(`a widget failed: ${states.join('\n')} ${errors.join('; ')}`)
    // What the widgets' queries took in the engine (Server-Timing db), which chDB runs one at a time.
    const db = await page.$$eval('[data-widget] .cost', (els) =>
      els.map((e) => Number(/db;dur=([\d.]+)/.exec((e as HTMLElement).dataset.serverTiming ?? '')?.[1] ?? 0)),
    )
    if (screenshot) await page.screenshot({ path: screenshot, fullPage: true })
    await context.close()
    // The chart shows the tiles' answer (and its cost): counted once.
    return { ms, dbMs: db.reduce((a, b) => a + b, 0) - (db[2] ?? 0) }
  }

  // As the first run does before printing the link: build the demo's sealed history (a kept --dir
  // has it from its first run).
  started = performance.now()
  if (!seeded) await rt.sealed?.build('demo')
  const buildS = seeded ? null : (performance.now() - started) / 1000
  if (buildS !== null) console.log(`rollups built in ${buildS.toFixed(1)} s`)
  const first = await navigate(uncached.port)
  console.log(`first navigation (fresh browser, no response cache): ${first.ms.toFixed(0)} ms`)

  const runs: { served: number[]; noCache: number[]; noCacheDb: number[] } = { served: [], noCache: [], noCacheDb: [] }
  for (let i = 0; i < RUNS; i++) {
    const plain = await navigate(uncached.port)
    runs.noCache.push(plain.ms)
    runs.noCacheDb.push(plain.dbMs)
    runs.served.push((await navigate(served.port, i === RUNS - 1 ? values.screenshot : undefined)).ms)
  }
  const result = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, loadavg1AtStart: load0, loadavg1: loadavg()[0] },
    data: { events: 1_000_000, days: 30, seedSeconds: seedS === null ? null : Number(seedS.toFixed(1)) },
    buildSeconds: buildS === null ? null : Number(buildS.toFixed(1)),
    firstNavigationMs: Math.round(first.ms),
    medianMs: { noCache: Math.round(median(runs.noCache)), served: Math.round(median(runs.served)), noCacheEngineDbSum: Math.round(median(runs.noCacheDb)) },
    maxMs: { noCache: Math.round(Math.max(...runs.noCache)), served: Math.round(Math.max(...runs.served)) },
    runsMs: { noCache: runs.noCache.map(Math.round), served: runs.served.map(Math.round), noCacheEngineDbSum: runs.noCacheDb.map(Math.round) },
  }
  writeFileSync('benchmarks/results/explorer.json', `${JSON.stringify(result, null, 2)}\n`)
  console.log(JSON.stringify(result, null, 2))
  await browser.close()
  await served.shutdown(1000)
  await uncached.shutdown(1000)
} finally {
  await rt.close()
  if (!values.dir) rmSync(dir, { recursive: true, force: true })
}
