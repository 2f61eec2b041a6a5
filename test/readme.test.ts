import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { configSchema } from '../src/config.ts'
import { ERROR_CODES } from '../src/http/error-codes.ts'
import { DIMENSIONS } from '../src/query/dimensions.ts'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')

// The README is prose, but these lists must not drift from the code they describe.
describe('README', () => {
  it('documents every environment variable', () => {
    const missing = Object.keys(configSchema.shape).filter((name) => !readme.includes(`\`${name}\``))
    expect(missing).toEqual([])
  })

  it('lists every error code', () => {
    const missing = Object.keys(ERROR_CODES).filter((code) => !readme.includes(`\`${code}\``))
    expect(missing).toEqual([])
  })

  it('names every dimension route', () => {
    const missing = DIMENSIONS.filter((d) => !readme.includes(`\`${d.name}\``)).map((d) => d.name)
    expect(missing).toEqual([])
  })

  it('gives the two commands', () => {
    expect(readme).toContain('npm ci && npm start')
    expect(readme).toContain('npm test')
  })
})
