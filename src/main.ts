import { clientsCommand } from './cli/clients.ts'
import { importCommand } from './cli/import.ts'
import { projectsCommand } from './cli/projects.ts'
import { seedCommand } from './cli/seed.ts'
import { serveCommand } from './cli/serve.ts'
import { CommandError, parse, USAGE, UsageError } from './cli/usage.ts'
import { DataDirectoryLockedError, EmbeddedEngineMissingError } from './clickhouse/engine/errors.ts'
import { openEngine } from './clickhouse/engine/index.ts'
import { migrate } from './clickhouse/migrate.ts'
import { ConfigError, loadConfig } from './config.ts'
import { createLogger } from './log.ts'
import { openRuntime } from './runtime.ts'

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv
  const config = loadConfig()
  // Logs go to stderr so that stdout carries only what a command prints for machines.
  const logger = createLogger(config.LOG_LEVEL, process.stderr)
  const open = () => openRuntime(config, logger)
  switch (command) {
    case 'serve':
      parse(args, {})
      await serveCommand(await open())
      return 0
    case 'migrate': {
      parse(args, {})
      const engine = await openEngine(config)
      try {
        process.stdout.write(`${JSON.stringify({ applied: await migrate(engine.client) })}\n`)
      } finally {
        await engine.close()
      }
      return 0
    }
    case 'seed':
      await seedCommand(args, open)
      return 0
    case 'projects':
      await projectsCommand(args, open)
      return 0
    case 'clients':
      await clientsCommand(args, open)
      return 0
    case 'import':
      return importCommand(args, open)
    case undefined:
      throw new UsageError('missing command')
    case 'help':
    case '--help':
      process.stdout.write(USAGE)
      return 0
    default:
      throw new UsageError(`unknown command: ${command}`)
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`quarry: ${err.message}\n\n${USAGE}`)
      process.exit(2)
    }
    if (err instanceof DataDirectoryLockedError || err instanceof EmbeddedEngineMissingError || err instanceof CommandError || err instanceof ConfigError) {
      process.stderr.write(`quarry: ${err.message}\n`)
      process.exit(1)
    }
    process.stderr.write(`quarry: ${(err as Error)?.stack ?? String(err)}\n`)
    process.exit(1)
  },
)
