import { defineConfig } from 'vitest/config'

// The fast tier: pure tests of statement builders, filters, ranges, templates, cursors and result
// assembly. The setup file makes loading the engine an error, so nothing here can start chDB.
export default defineConfig({
  test: {
    pool: 'threads',
    include: ['test/unit/**/*.test.ts'],
    setupFiles: ['test/unit/no-engine.setup.ts'],
  },
})
