import type { Logger } from 'pino'
import { openEngine, type Engine } from './clickhouse/engine/index.ts'
import { createQueryGate, type QueryGate } from './clickhouse/gate.ts'
import { migrate } from './clickhouse/migrate.ts'
import { createQueryRunner, type QueryRunner } from './clickhouse/run.ts'
import type { Config } from './config.ts'
import { learnEngineTimezones } from './query/time-range.ts'
import { configuredSealedHistory, type SealedHistory } from './services/sealed/index.ts'
import { loadSigningKey } from './signing-key.ts'
import { createMetrics, type Metrics } from './telemetry/metrics.ts'
import { openTracing, type Tracing } from './telemetry/tracing.ts'

/** The engine and everything that queries it, opened once per process. */
export interface Runtime {
  config: Config
  engine: Engine
  gate: QueryGate
  runner: QueryRunner
  logger: Logger
  signingKey: Buffer
  /** The sealed history's background builds (QUARRY_SEALED); none when turned off. */
  sealed?: SealedHistory
  /** The process's Prometheus registry and instruments (GET /metrics). */
  metrics: Metrics
  /** OpenTelemetry traces, when an OTLP endpoint is configured. */
  tracing?: Tracing
  close(): Promise<void>
}

export async function openRuntime(config: Config, logger: Logger): Promise<Runtime> {
  const engine = await openEngine(config)
  try {
    const applied = await migrate(engine.client)
    if (applied.length > 0) logger.info({ applied }, 'schema migrated')
  } catch (err) {
    await engine.close()
    throw err
  }
  const gate = createQueryGate({
    concurrency: config.QUARRY_MAX_CONCURRENT_QUERIES,
    maxQueued: config.QUARRY_MAX_QUEUED_QUERIES,
    // No query waits for a slot longer than a dashboard query may run: then it is a 503 overloaded.
    maxWaitMs: config.QUARRY_QUERY_TIMEOUT_S * 1000,
    queueWaitMs: config.QUARRY_MAX_QUEUE_WAIT_MS,
  })
  const metrics = createMetrics({ process: true })
  metrics.watch({ gate })
  const tracing = openTracing(config)
  const runner = createQueryRunner(engine, gate, logger, { metrics, tracing })
  const signingKey = await loadSigningKey(runner, config.QUARRY_SECRET)
  const zones = await runner.rows<{ name: string }>(
    { name: 'time_zones', sql: 'SELECT time_zone AS name FROM system.time_zones', params: {} },
    { timeoutS: config.QUARRY_QUERY_TIMEOUT_S },
  )
  learnEngineTimezones(zones.map((z) => z.name))
  const sealed = configuredSealedHistory(config, { runner, logger, metrics })
  return {
    config,
    engine,
    gate,
    runner,
    logger,
    signingKey,
    sealed,
    metrics,
    tracing,
    close: async () => {
      // The builds end before the engine closes under them.
      await sealed?.stop()
      await tracing?.shutdown()
      return engine.close()
    },
  }
}
