import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const BIN = fileURLToPath(new URL('../../bin/quarry.js', import.meta.url))

export interface CliResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Starts `node bin/quarry.js <args>` on a data directory, quiet unless `env` says otherwise. */
export function startQuarry(dataDir: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, QUARRY_DATA_DIR: dataDir, LOG_LEVEL: 'silent', QUARRY_DEMO: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** Everything a process printed, and how it ended. */
export function finished(child: ChildProcess): Promise<CliResult> {
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}

export const quarry = (dataDir: string, args: string[], env: Record<string, string> = {}) =>
  finished(startQuarry(dataDir, args, env))

/** Resolves once the child's stderr contains `text`; rejects if it exits or `timeoutMs` passes first. */
export function waitForStderr(child: ChildProcess, text: string, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = ''
    const timer = setTimeout(() => done(new Error(`no "${text}" on stderr within ${timeoutMs} ms:\n${seen}`)), timeoutMs)
    const onData = (chunk: Buffer) => {
      seen += chunk.toString()
      if (seen.includes(text)) done()
    }
    const onExit = (code: number | null) => done(new Error(`exited with ${code} before "${text}":\n${seen}`))
    function done(err?: Error) {
      clearTimeout(timer)
      child.stderr?.off('data', onData)
      child.off('exit', onExit)
      if (err) reject(err)
      else resolve(seen)
    }
    child.stderr?.on('data', onData)
    child.once('exit', onExit)
  })
}
