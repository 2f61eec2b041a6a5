/**
 * The CLI as an operator meets it, each command a process of its own: help and version without a
 * valid environment, `.env` in the working directory, the line saying where Quarry listens, and an
 * install without the optional embedded engine (chdb).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { configSchema } from '../src/config.ts'
import { finished, ROOT, type CliResult } from './helpers/cli.ts'

const dir = mkdtempSync(join(tmpdir(), 'quarry-cli-ops-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version

/** The environment without any Quarry variable the test runner may carry. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of Object.keys(configSchema.shape)) delete env[name]
  return { ...env, ...extra }
}

function run(args: string[], opts: { cwd?: string; env?: Record<string, string>; bin?: string } = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [opts.bin ?? join(ROOT, 'bin/quarry.js'), ...args], {
    cwd: opts.cwd ?? dir,
    env: cleanEnv({ LOG_LEVEL: 'silent', ...opts.env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return finished(child)
}

const COMMANDS = ['serve', 'migrate', 'seed', 'projects', 'clients', 'import']

describe('help and version', () => {
  it('--version prints the package version', async () => {
    const result = await run(['--version'])
    expect(result).toMatchObject({ code: 0, stdout: `${VERSION}\n`, stderr: '' })
  })

  it('--help after every command, -h too, prints that command\'s help, even with an invalid environment', async () => {
    // -h and --help are one rule for every command: each command once, -h on two of them.
    for (const args of [...COMMANDS.map((command) => [command, '--help']), ['seed', '-h'], ['clients', 'create', '-h']]) {
      const result = await run(args, { env: { PORT: 'abc', QUARRY_DEMO: 'maybe' } })
      expect(result.code, args.join(' ')).toBe(0)
      expect(result.stdout).toContain(`Usage:\n  quarry ${args[0]}`)
      expect(result.stderr).toBe('')
    }
  }, 120_000)

  it('PORT=abc quarry --help still prints the usage', async () => {
    for (const args of [['--help'], ['-h'], ['help'], ['help', 'seed']]) {
      const result = await run(args, { env: { PORT: 'abc' } })
      expect(result.code).toBe(0)
      expect(result.stdout).toContain('Usage:')
    }
  })

  it('quarry serve --help lists every variable Quarry reads', async () => {
    const result = await run(['serve', '--help'])
    for (const name of Object.keys(configSchema.shape)) expect(result.stdout).toMatch(new RegExp(`^  ${name}=`, 'm'))
  })

  it('help for an unknown command is a usage error', async () => {
    const result = await run(['frobnicate', '--help'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('unknown command: frobnicate')
  })
})

describe('.env in the working directory', () => {
  it('is read at start; the real environment wins; an empty value counts as unset', async () => {
    const cwd = join(dir, 'dotenv')
    mkdirSync(cwd)
    const fromFile = join(dir, 'data-from-file')
    const fromEnv = join(dir, 'data-from-env')
    writeFileSync(join(cwd, '.env'), `QUARRY_DATA_DIR=${fromFile}\nQUARRY_DEMO=\nQUARRY_MAX_QUEUED_QUERIES=\n`)

    // The file names the data directory: migrate creates the schema there.
    const first = await run(['migrate'], { cwd })
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect((JSON.parse(first.stdout) as { applied: string[] }).applied.length).toBeGreaterThan(0)
    expect(existsSync(fromFile)).toBe(true)

    // A variable of the real environment wins over the file, and an empty one is no error.
    const second = await run(['migrate'], { cwd, env: { QUARRY_DATA_DIR: fromEnv, PORT: '' } })
    expect(second.stderr).toBe('')
    expect(second.code).toBe(0)
    expect(existsSync(fromEnv)).toBe(true)

    // A wrong value in the file is reported as the environment's.
    writeFileSync(join(cwd, '.env'), 'PORT=abc\n')
    const third = await run(['migrate'], { cwd })
    expect(third.code).toBe(1)
    expect(third.stderr).toContain('invalid environment')
    expect(third.stderr).toContain('PORT')
  }, 120_000)
})

/** The line a starting `quarry serve` prints on stdout once it listens. */
function listeningLine(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`no listening line within 90 s: ${out}`)), 90_000)
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const found = out.split('\n').find((l) => l.includes('is listening on'))
      if (found) {
        clearTimeout(timer)
        resolve(found)
      }
    })
  })
}

describe('quarry serve', () => {
  it('says on stdout, in one line, where it listens and where /docs and the explorer are', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/quarry.js'), 'serve'], {
      cwd: dir,
      env: cleanEnv({ LOG_LEVEL: 'silent', PORT: '0', QUARRY_DEMO: '0', QUARRY_DATA_DIR: join(dir, 'serve-data') }),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const done = finished(child)
    try {
      const line = await listeningLine(child)
      const match = /^Quarry (\S+) is listening on (http:\/\/127\.0\.0\.1:(\d+)) with the embedded engine: API reference (\S+), explorer (\S+)$/.exec(line)
      expect(match, line).not.toBeNull()
      const [, version, base, port, docs, explorer] = match!
      expect(version).toBe(VERSION)
      expect(Number(port)).toBeGreaterThan(0)
      expect(docs).toBe(`${base}/docs`)
      expect(explorer).toBe(`${base}/`)
      const res = await fetch(docs!)
      expect(res.status).toBe(200)
      expect(await res.text()).toContain('/openapi.json')
    } finally {
      child.kill('SIGTERM')
      await done
    }
  }, 120_000)
})

/** A copy of the program whose node_modules holds every installed package but those named. */
function installWithout(folder: string, left: string[]): string {
  const app = join(dir, folder)
  mkdirSync(join(app, 'node_modules'), { recursive: true })
  for (const part of ['bin', 'src', 'sql', 'vendor', 'package.json']) cpSync(join(ROOT, part), join(app, part), { recursive: true })
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    if (left.includes(name) || name === '.bin' || name.startsWith('.')) continue
    symlinkSync(join(ROOT, 'node_modules', name), join(app, 'node_modules', name))
  }
  return app
}

/** As `npm ci --omit=optional` leaves the program, as far as the embedded engine goes. */
const installWithoutChdb = () => installWithout('server-mode', ['chdb'])

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe("an install without esbuild's platform binary (an optional package of esbuild)", () => {
  it('serves the API, and answers / with a 503 that says why instead of a 500', async () => {
    // esbuild's own package, copied so that it looks for its binary here, less the binary its install
    // step placed in bin/: what an install that could not get one leaves.
    const app = installWithout('no-esbuild-binary', ['@esbuild', 'esbuild'])
    cpSync(join(ROOT, 'node_modules', 'esbuild'), join(app, 'node_modules', 'esbuild'), { recursive: true })
    rmSync(join(app, 'node_modules', 'esbuild', 'bin', 'esbuild'))
    const child = spawn(process.execPath, [join(app, 'bin/quarry.js'), 'serve'], {
      cwd: app,
      env: cleanEnv({ LOG_LEVEL: 'silent', PORT: '0', QUARRY_DEMO: '0', QUARRY_DATA_DIR: join(dir, 'no-esbuild-data') }),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const done = finished(child)
    try {
      const base = /is listening on (http:\/\/\S+) /.exec(await listeningLine(child))![1]!
      expect((await fetch(`${base}/healthz`)).status).toBe(200)
      const page = await fetch(`${base}/`)
      expect(page.status).toBe(503)
      const body = (await page.json()) as { code: string; message: string }
      expect(body.code).toBe('explorer_unavailable')
      expect(body.message).toContain('the explorer page could not be built')
    } finally {
      child.kill('SIGTERM')
      await done
    }
  }, 120_000)
})

describe('an install without chdb (server mode)', () => {
  const app = installWithoutChdb()
  const bin = join(app, 'bin/quarry.js')

  it('has no chdb to load', () => {
    expect(existsSync(join(app, 'node_modules', 'chdb'))).toBe(false)
  })

  it('says plainly that the embedded engine needs chdb when no CLICKHOUSE_URL is set', async () => {
    const result = await run(['migrate'], { bin, cwd: app, env: { QUARRY_DATA_DIR: join(dir, 'no-chdb-data') } })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('the embedded engine needs the optional package chdb')
    expect(result.stderr).toContain('CLICKHOUSE_URL')
    expect(result.stderr).not.toMatch(/\n\s+at /)
  }, 60_000)

  it('goes to the server given by CLICKHOUSE_URL without loading chdb', async () => {
    const port = await closedPort()
    const result = await run(['migrate'], { bin, cwd: app, env: { CLICKHOUSE_URL: `http://127.0.0.1:${port}` } })
    expect(result.code).toBe(1)
    expect(result.stderr).not.toContain('chdb')
    expect(result.stderr).toMatch(/ECONNREFUSED|connect/i)
  }, 60_000)

  it('still prints help', async () => {
    const result = await run(['serve', '--help'], { bin, cwd: app })
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('CLICKHOUSE_URL=')
  })
})
