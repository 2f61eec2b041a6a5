import { defineConfig } from 'vitest/config'

// chDB locks its data directory per process, so every test file runs in its own fork.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
})
