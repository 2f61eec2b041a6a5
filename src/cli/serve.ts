import { buildApp } from '../app.ts'
import { createClientRow } from '../auth/clients.ts'
import { createResponseCache } from '../http/cache/middleware.ts'
import { eventsWatermark } from '../http/cache/watermark.ts'
import { findProject, listProjects } from '../projects.ts'
import type { Runtime } from '../runtime.ts'
import { explorerAssets } from '../routes/explorer.ts'
import { listen } from '../server.ts'
import { baseUrlOf, explorerLink } from '../web/link.ts'
import { seedProgress, seedWithProject } from './seed.ts'
import { VERSION } from './usage.ts'

const DEMO_EVENTS = 1_000_000

/** On an empty embedded engine: a demo project with a month of traffic and a read client for it. */
async function firstRun(rt: Runtime, baseUrl: string): Promise<void> {
  if (rt.engine.mode !== 'embedded' || !rt.config.QUARRY_DEMO) return
  if ((await listProjects(rt.runner)).length > 0) return
  process.stdout.write('First run: creating project "demo" with about 1,000,000 events over the last 30 days…\n')
  await seedWithProject(rt, { projectId: 'demo', events: DEMO_EVENTS, days: 30, seed: 1, end: new Date() }, seedProgress(process.stdout, 'demo'))
  const client = await createClientRow(rt.runner, { type: 'read', projectId: 'demo', organizationId: 'default', name: 'demo' })
  await prepareDemo(rt)
  process.stdout.write(
    [
      '',
      'Demo read client (the secret is shown only now):',
      `  client id:     ${client.id}`,
      `  client secret: ${client.secret}`,
      '',
      'Try:',
      `  curl -s -H 'openpanel-client-id: ${client.id}' -H 'openpanel-client-secret: ${client.secret}' '${baseUrl}/insights/demo/metrics?range=30d'`,
      '',
      'Or open the explorer (this link signs in):',
      `  ${explorerLink(baseUrl, client, 'demo')}`,
      '',
    ].join('\n'),
  )
}

/**
 * Builds the demo's sealed history before the link is printed, so the first
 * visit to the explorer reads them instead of starting them (and waiting behind them).
 */
async function prepareDemo(rt: Runtime): Promise<void> {
  const project = await findProject(rt.runner, 'demo')
  if (!project || !rt.sealed) return
  process.stdout.write('Preparing the demo\'s rollups…\n')
  const started = performance.now()
  // A failed build is not fatal: requests read the events instead, and the next one retries it.
  await rt.sealed.build(project.id).catch((err: unknown) =>
    rt.logger.warn({ err }, 'the demo\'s rollups could not be built now; requests read the events'),
  )
  process.stdout.write(`Rollups ready in ${((performance.now() - started) / 1000).toFixed(1)} s.\n`)
}

/** The one line a person reads on start; a wildcard address is shown as the loopback one to open. */
export function listeningLine(host: string, port: number, engine: string): string {
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
  const base = `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`
  const where = shown === host ? base : `${base} (all interfaces)`
  return `Quarry ${VERSION} is listening on ${where} with the ${engine} engine: API reference ${base}/docs, explorer ${base}/`
}

export async function serveCommand(rt: Runtime): Promise<void> {
  const { config, logger } = rt
  const responseCache =
    config.QUARRY_RESPONSE_CACHE_MB > 0 &&
    createResponseCache(
      { now: () => new Date(), watermark: eventsWatermark(rt.runner, config.QUARRY_QUERY_TIMEOUT_S) },
      { maxBytes: config.QUARRY_RESPONSE_CACHE_MB * 2 ** 20 },
    )
  const stopping = new AbortController()
  const app = buildApp({ config, runner: rt.runner, logger, signingKey: rt.signingKey, version: VERSION, responseCache, sealed: rt.sealed, shutdown: stopping.signal, metrics: rt.metrics, tracing: rt.tracing })
  const host = config.HOST
  const baseUrl = baseUrlOf(config)
  // Built before listening, so the first visit to / does not wait for the bundler. Without it (an
  // image installed without optional packages lacks esbuild's binary) the API still serves.
  await explorerAssets().catch((err: unknown) => logger.warn({ err }, 'the explorer could not be built; GET / will fail'))
  await firstRun(rt, baseUrl)
  const running = await listen(app, host, config.PORT)
  logger.info({ host, port: running.port, engine: rt.engine.mode }, 'listening')
  process.stdout.write(`${listeningLine(host, running.port, rt.engine.mode)}\n`)
  await new Promise<void>((resolve) => {
    const stop = async (signal: string) => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      logger.info({ signal }, 'shutting down')
      stopping.abort()
      // The builds stop now, beside the requests' drain: they answer none of them, and one left
      // running until the last response was out made the drain's time and its own add up.
      await Promise.all([running.shutdown(config.QUARRY_SHUTDOWN_GRACE_S * 1000), rt.sealed?.stop()])
      await rt.close()
      resolve()
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
}
