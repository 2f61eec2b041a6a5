import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * Runs one job of lib/load-worker.mjs in a process of its own (so that the load generator's event
 * loop and buffers are not the server's) and resolves with the report it prints.
 */
export function runLoadWorker<T>(job: Record<string, unknown>): Promise<T> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), 'load-worker.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.on('error', fail)
    child.on('exit', (code) => (code === 0 ? done(JSON.parse(out) as T) : fail(new Error(`load worker exited with ${code}`))))
    child.stdin.end(JSON.stringify(job))
  })
}
