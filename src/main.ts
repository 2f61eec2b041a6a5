import { resolve } from 'node:path'
import { commandHelp, CommandError, isCommand, parse, USAGE, UsageError, VERSION } from './cli/usage.ts'
import { DataDirectoryLockedError, EmbeddedEngineMissingError } from './clickhouse/engine/errors.ts'
import { applyDotEnv, ConfigError, loadConfig } from './config.ts'

// A command's modules are loaded when it runs: help, the version and a usage error answer without
// loading the HTTP stack, the engine client and the telemetry (a start of 1.2-1.6 s for all of them).

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
  const { createLogger, logDestination } = await import('./log.ts')
  const logger = createLogger(config.LOG_LEVEL, logDestination(process.stderr))
  const open = async () => (await import('./runtime.ts')).openRuntime(config, logger)
  switch (command) {
    case 'serve': {
      parse(args, {})
      const { serveCommand } = await import('./cli/serve.ts')
      await serveCommand(await open())
      return 0
    }
    case 'migrate': {
      parse(args, {})
      const [{ openEngine }, { migrate }] = await Promise.all([import('./clickhouse/engine/index.ts'), import('./clickhouse/migrate.ts')])
      const engine = await openEngine(config)
      try {
        process.stdout.write(`${JSON.stringify({ applied: await migrate(engine.client) })}\n`)
      } finally {
        await engine.close()
      }
      return 0
    }
    case 'seed':
      await (await import('./cli/seed.ts')).seedCommand(args, open)
      return 0
    case 'projects':
      await (await import('./cli/projects.ts')).projectsCommand(args, open)
      return 0
    case 'clients':
      await (await import('./cli/clients.ts')).clientsCommand(args, open)
      return 0
    case 'import':
      return (await import('./cli/import.ts')).importCommand(args, open)
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
