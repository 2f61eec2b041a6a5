import { defineConfig } from 'vitest/config'

// `npm run test:heavy`: the tests that need scale to mean anything (a million events streamed in
// every format, cut and resumed while inserts run, with memory sampled all along), the seed
// generator's (several seeds each) and the benchmark tools run as their users run them. CI runs them after `npm test`; they stay out of it
// so that the suite a developer runs keeps within its ten minutes on two cores.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/heavy/**/*.test.ts'],
    // One at a time: the memory and backpressure figures are of one export on the machine.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 300_000,
  },
})
