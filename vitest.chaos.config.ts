import { defineConfig } from 'vitest/config'

// `npm run test:chaos`: the slow fault scenarios (overload, disconnect storms, engine faults under
// load, shutdown under load, export integrity while inserting), plus the fast engine-fault file that
// `npm test` runs too. One file at a time: the overload figures measure the whole machine.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/chaos/**/*.chaos.ts', 'test/reliability-engine.test.ts'],
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 300_000,
  },
})
