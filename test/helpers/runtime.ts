import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp, type AppDeps } from '../../src/app.ts'
import { configSchema, type Config } from '../../src/config.ts'
import { createLogger } from '../../src/log.ts'
import { openRuntime, type Runtime } from '../../src/runtime.ts'

/** A config as the service would load it from an empty environment, plus overrides. */
export function testConfig(overrides: Record<string, string> = {}): Config {
  return configSchema.parse({ LOG_LEVEL: 'silent', QUARRY_DEMO: '0', ...overrides })
}

export interface TestRuntime extends Runtime {
  dir: string
  /** Closes the engine and removes the temporary data directory. */
  dispose(): Promise<void>
}

/** A migrated embedded engine in a fresh temporary directory (one per test file: chDB locks it). */
export async function openTestRuntime(overrides: Record<string, string> = {}): Promise<TestRuntime> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-test-'))
  const config = testConfig({ QUARRY_DATA_DIR: dir, ...overrides })
  const rt = await openRuntime(config, createLogger(config.LOG_LEVEL))
  return {
    ...rt,
    dir,
    async dispose() {
      await rt.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export function testApp(rt: Runtime, extra: Partial<AppDeps> = {}) {
  return buildApp({ config: rt.config, runner: rt.runner, logger: rt.logger, signingKey: rt.signingKey, metrics: rt.metrics, tracing: rt.tracing, ...extra })
}
