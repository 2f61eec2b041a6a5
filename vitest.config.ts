import { defineConfig } from 'vitest/config'
import unit from './vitest.unit.config.ts'

// Everything: the unit tier as it runs alone, and the suites on the embedded engine. chDB locks
// its data directory per process, so every engine test file runs in its own fork.
export default defineConfig({
  test: {
    // Vitest's default is one worker fewer than the cores: one on a 2-core CI machine, so the
    // engine files ran one after another. Much of their time is waiting (child processes,
    // timeouts, chDB's own threads), so two at a time take 2 cores' worth without starving either.
    maxWorkers: 2,
    projects: [
      { test: { ...unit.test, name: 'unit' } },
      {
        test: {
          name: 'engine',
          pool: 'forks',
          include: ['test/**/*.test.ts'],
          // test/heavy/ is its own tier (vitest.heavy.config.ts), which CI runs after this one.
          exclude: ['test/unit/**', 'test/heavy/**', '**/node_modules/**'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
})
