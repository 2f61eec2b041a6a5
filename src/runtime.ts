import type { Logger } from 'pino'
import { openEngine, type Engine } from './clickhouse/engine.ts'
import { createQueryGate, type QueryGate } from './clickhouse/gate.ts'
import { migrate } from './clickhouse/migrate.ts'
import { createQueryRunner, type QueryRunner } from './clickhouse/run.ts'
import type { Config } from './config.ts'

/** The engine and everything that queries it, opened once per process. */
export interface Runtime {
  config: Config
  engine: Engine
  gate: QueryGate
  runner: QueryRunner
  logger: Logger
  close(): Promise<void>
}

export async function openRuntime(config: Config, logger: Logger, opts: { migrate?: boolean } = {}): Promise<Runtime> {
  const engine = await openEngine(config)
  try {
    if (opts.migrate !== false) {
      const applied = await migrate(engine.client)
      if (applied.length > 0) logger.info({ applied }, 'schema migrated')
    }
  } catch (err) {
    await engine.close()
    throw err
  }
  const gate = createQueryGate({
    concurrency: config.QUARRY_MAX_CONCURRENT_QUERIES,
    maxQueued: config.QUARRY_MAX_QUEUED_QUERIES,
  })
  const runner = createQueryRunner(engine, gate, logger)
  return { config, engine, gate, runner, logger, close: () => engine.close() }
}
