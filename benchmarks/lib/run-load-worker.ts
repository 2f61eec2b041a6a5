import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * Runs one job of a load generator in a process of its own (so that its event loop and buffers are
 * not the server's) and resolves with the report it prints: lib/load-worker.mjs (each response
 * read whole, every latency kept) or lib/autocannon-worker.mjs.
 */
export function runLoadWorker<T>(job: Record<string, unknown>, worker: 'load-worker.mjs' | 'autocannon-worker.mjs' = 'load-worker.mjs'): Promise<T> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), worker)], { stdio: ['pipe', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.on('error', fail)
    child.on('exit', (code) => (code === 0 ? done(JSON.parse(out) as T) : fail(new Error(`load worker exited with ${code}`))))
    child.stdin.end(JSON.stringify(job))
  })
}
