/**
 * `npm run test:server`: the server suites under vitest.server.config.ts, or, without a reachable
 * Docker engine, one line saying why and exit 0 (nothing here needs Docker otherwise).
 */
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { dockerUnavailable, skipLine } from './clickhouse.ts'

const reason = await dockerUnavailable()
if (reason) {
  console.log(skipLine(reason))
  process.exit(0)
}
const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs')
const child = spawn(process.execPath, [vitest, 'run', '--config', 'vitest.server.config.ts', ...process.argv.slice(2)], {
  stdio: 'inherit',
})
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
