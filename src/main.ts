import { resolve } from 'node:path'
import { clientsCommand } from './cli/clients.ts'
import { importCommand } from './cli/import.ts'
import { projectsCommand } from './cli/projects.ts'
import { seedCommand } from './cli/seed.ts'
import { serveCommand } from './cli/serve.ts'
import { commandHelp, CommandError, isCommand, parse, USAGE, UsageError, VERSION } from './cli/usage.ts'
import { DataDirectoryLockedError, EmbeddedEngineMissingError } from './clickhouse/engine/errors.ts'
import { openEngine } from './clickhouse/engine/index.ts'
import { migrate } from './clickhouse/migrate.ts'
import { applyDotEnv, ConfigError, loadConfig } from './config.ts'
import { createLogger, logDestination } from './log.ts'
import { openRuntime } from './runtime.ts'

/** Help and the version need no configuration: they print even when the environment is invalid. */
function helpOrVersion(command: string | undefined, args: string[]): string | undefined {
  if (command === '--version') return `${VERSION}\n`
  if (command === 'help' || command === '--help' || command === '-h') {
    const topic = args[0]
    if (topic === undefined) return USAGE
    if (!isCommand(topic)) throw new UsageError(`unknown command: ${topic}`)
    return commandHelp(topic)
  }
  if (command !== undefined && (args.includes('--help') || args.includes('-h'))) {
    if (!isCommand(command)) throw new UsageError(`unknown command: ${command}`)
    return commandHelp(command)
  }
  return undefined
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv
  const help = helpOrVersion(command, args)
  if (help !== undefined) {
    process.stdout.write(help)
    return 0
  }
  applyDotEnv(resolve('.env'))
  const config = loadConfig()
  // Logs go to stderr so that stdout carries only what a command prints for machines.
  const logger = createLogger(config.LOG_LEVEL, logDestination(process.stderr))
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
