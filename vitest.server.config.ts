import { defineConfig } from 'vitest/config'

// The server suites: the service over HTTP against a ClickHouse server in a container
// (testcontainers). `npm run test:server` runs them; `npm test` never does.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/server/**/*.server.ts'],
    globalSetup: ['test/server/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
  },
})
