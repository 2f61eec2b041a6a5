import { vi } from 'vitest'

// The unit tier must not start the engine: a test that reaches chDB, even through an import
// chain, fails here instead of silently running against it.
vi.mock('chdb', () => {
  throw new Error('the unit tier loaded chdb; move this test out of test/unit or import a pure module')
})
