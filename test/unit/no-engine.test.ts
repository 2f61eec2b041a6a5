import { describe, expect, it } from 'vitest'

describe('the unit tier', () => {
  it('cannot load the engine: importing the embedded engine fails here', async () => {
    await expect(import('../../src/clickhouse/engine/embedded.ts')).rejects.toThrow()
  })
})
