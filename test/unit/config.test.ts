import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { commandHelp, environmentHelp, USAGE } from '../../src/cli/usage.ts'
import { applyDotEnv, ConfigError, configSchema, loadConfig } from '../../src/config.ts'
import { seedProgress } from '../../src/cli/seed.ts'

const dir = mkdtempSync(join(tmpdir(), 'quarry-config-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('loadConfig', () => {
  it('takes an empty variable for an unset one: its default applies', () => {
    const config = loadConfig({ QUARRY_DEMO: '', PORT: '', CLICKHOUSE_URL: '', QUARRY_SECRET: '', QUARRY_MAX_QUEUED_QUERIES: '' })
    expect(config).toEqual(loadConfig({}))
    expect(config.QUARRY_DEMO).toBe(true)
    expect(config.PORT).toBe(3000)
    expect(config.CLICKHOUSE_URL).toBeUndefined()
  })

  it('still refuses a value that is set and wrong, naming it', () => {
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(ConfigError)
    expect(() => loadConfig({ QUARRY_DEMO: 'yes' })).toThrow(/QUARRY_DEMO/)
  })
})

describe('applyDotEnv', () => {
  it('adds what the file sets and the environment does not; the environment wins, even when empty', () => {
    const file = join(dir, 'one.env')
    writeFileSync(file, ['# a comment', 'PORT=4123', 'HOST="0.0.0.0"', 'QUARRY_DEMO=0', 'export LOG_LEVEL=debug', 'QUARRY_SECRET=', ''].join('\n'))
    const env: NodeJS.ProcessEnv = { PORT: '5000', QUARRY_DEMO: '' }
    const added = applyDotEnv(file, env)
    expect(added.sort()).toEqual(['HOST', 'LOG_LEVEL', 'QUARRY_SECRET'])
    expect(env).toEqual({ PORT: '5000', QUARRY_DEMO: '', HOST: '0.0.0.0', LOG_LEVEL: 'debug', QUARRY_SECRET: '' })
    const config = loadConfig(env)
    expect([config.PORT, config.HOST, config.LOG_LEVEL, config.QUARRY_DEMO, config.QUARRY_SECRET]).toEqual([5000, '0.0.0.0', 'debug', true, undefined])
  })

  it('does nothing without a file', () => {
    const env: NodeJS.ProcessEnv = {}
    expect(applyDotEnv(join(dir, 'absent.env'), env)).toEqual([])
    expect(env).toEqual({})
  })
})

describe('help', () => {
  it('lists every variable of the config declaration with its default and meaning', () => {
    const text = environmentHelp()
    for (const [name, schema] of Object.entries(configSchema.shape)) {
      expect(schema.description, name).toBeTruthy()
      expect(text).toContain(`  ${name}=`)
      expect(text).toContain(schema.description!)
    }
    expect(text).toContain('  PORT=3000\n')
    expect(text).toContain('  QUARRY_DEMO=1\n')
    expect(text).toContain('  CLICKHOUSE_URL=(unset)\n')
    expect(commandHelp('serve')).toContain(text)
  })

  it('names every command in the usage', () => {
    for (const command of ['serve', 'migrate', 'seed', 'projects', 'clients', 'import']) {
      expect(USAGE).toMatch(new RegExp(`^  ${command}\\b`, 'm'))
      expect(commandHelp(command as Parameters<typeof commandHelp>[0])).toContain(`  quarry ${command}`)
    }
  })
})

describe('seed progress', () => {
  it('prints one line per step when not on a terminal', async () => {
    const out = new PassThrough()
    let text = ''
    out.on('data', (chunk: Buffer) => (text += chunk.toString()))
    const progress = seedProgress(out, 'demo')
    const total = 1_000_000
    for (const done of [0, 500_000, total]) progress.report(done, total)
    progress.end()
    const lines = text.trimEnd().split('\n')
    expect(lines).toHaveLength(3)
    expect(lines[0]).toMatch(/^seeding demo: 0 of 1,000,000 events, 0% \(\d+ s\)$/)
    expect(lines[1]).toMatch(/^seeding demo: 500,000 of 1,000,000 events, 50% \(\d+ s\)$/)
    expect(lines[2]).toMatch(/^seeding demo: 1,000,000 of 1,000,000 events, 100% \(\d+ s\)$/)
  })
})
