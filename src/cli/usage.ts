import { createRequire } from 'node:module'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { configSchema } from '../config.ts'

export const VERSION: string = createRequire(import.meta.url)('../../package.json').version

/** Every command: its synopses and what it does. The usage and each command's --help come from here. */
const COMMANDS = {
  serve: {
    synopsis: ['serve'],
    summary: 'run the HTTP service (HOST, PORT)',
    about: 'Runs the HTTP service on HOST:PORT after applying the schema. SIGINT/SIGTERM stop accepting, let requests in flight finish (QUARRY_SHUTDOWN_GRACE_S) and exit 0.',
  },
  migrate: { synopsis: ['migrate'], summary: 'apply the schema in sql/schema', about: 'Applies the files of sql/schema not yet applied; prints {"applied": [...]}.' },
  seed: {
    synopsis: ['seed --project ID [--events N] [--days D] [--seed S] [--end ISO]', 'seed --preset 10m|100m [--seed S] [--end ISO]'],
    summary: 'generate deterministic synthetic traffic',
    about: 'Generates deterministic synthetic traffic (events 100000, days 30, seed 1, end now by default); --preset: the benchmark data, 100 projects of skewed sizes over 90 days.',
  },
  projects: {
    synopsis: ['projects create <id> [--name N] [--timezone IANA] [--organization ORG]', 'projects list'],
    summary: 'create and list projects',
    about: 'Creates a project (timezone UTC, organization "default" unless given) or lists them, one JSON line each.',
  },
  clients: {
    synopsis: ['clients create --type read|write|root [--project ID] [--organization ORG] [--name N]', 'clients list', 'clients revoke <id>'],
    summary: 'create, list and revoke API clients',
    about: 'API clients: create prints the secret once; list never shows it; revoke refuses the client from then on.',
  },
  import: {
    synopsis: ['import --project ID [--format ndjson|csv|parquet] [--table events|profiles|groups] [--on-error skip|abort] FILE...'],
    summary: 'load events, profiles or groups files',
    about:
      "Loads events files (events columns or OpenPanel's export shape), or OpenPanel's profiles or groups (--table); " +
      'a file again adds nothing; prints totals as JSON.',
  },
} as const satisfies Record<string, { synopsis: readonly string[]; summary: string; about: string }>

export type CommandName = keyof typeof COMMANDS

export const isCommand = (name: string): name is CommandName => Object.hasOwn(COMMANDS, name)

const SYNOPSIS_WIDTH = 40

export const USAGE = [
  'Usage: quarry <command> [options]',
  '',
  'Commands:',
  ...Object.values(COMMANDS).flatMap(({ synopsis, summary }) => [
    ...synopsis.map((line, i) => (i === 0 && line.length < SYNOPSIS_WIDTH - 3 ? `  ${line.padEnd(SYNOPSIS_WIDTH - 2)}${summary}` : `  ${line}`)),
    ...(synopsis[0]!.length < SYNOPSIS_WIDTH - 3 ? [] : [`${' '.repeat(SYNOPSIS_WIDTH)}${summary}`]),
  ]),
  '',
  'Options:',
  `  ${'-h, --help'.padEnd(SYNOPSIS_WIDTH - 2)}this text; after a command, that command's help`,
  `  ${'--version'.padEnd(SYNOPSIS_WIDTH - 2)}the version`,
  '',
  'quarry <command> --help says what a command does. Settings are environment variables, also read',
  'from ./.env: quarry serve --help lists them.',
  '',
].join('\n')

/** A variable's default as it would be written in the environment. */
function shownDefault(value: unknown): string {
  if (value === undefined) return '(unset)'
  if (typeof value === 'boolean') return value ? '1' : '0'
  return value === '' ? '(empty)' : String(value)
}

/** The environment variables of src/config.ts, each with its default and meaning. */
export function environmentHelp(): string {
  const defaults = configSchema.parse({}) as Record<string, unknown>
  return [
    'Environment (also read from ./.env, where the real environment wins; an empty value counts as unset):',
    ...Object.entries(configSchema.shape).flatMap(([name, schema]) => [
      `  ${name}=${shownDefault(defaults[name])}`,
      `      ${schema.description ?? ''}`,
    ]),
    '',
  ].join('\n')
}

export function commandHelp(name: CommandName): string {
  const { synopsis, about } = COMMANDS[name]
  return [
    'Usage:',
    ...synopsis.map((line) => `  quarry ${line}`),
    '',
    about,
    '',
    ...(name === 'serve' || name === 'migrate' ? [environmentHelp()] : ['The engine settings (CLICKHOUSE_URL, QUARRY_DATA_DIR, ...): quarry serve --help.', '']),
  ].join('\n')
}

/** Bad arguments: the CLI prints the message and the usage and exits 2. */
export class UsageError extends Error {}

/** Another failure worth a plain message and exit 1, without a stack trace. */
export class CommandError extends Error {}

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, positionals = 0) {
  let parsed
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: positionals > 0 })
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  if (parsed.positionals.length > positionals) {
    throw new UsageError(`unexpected argument: ${parsed.positionals[positionals]}`)
  }
  return parsed
}

export function positiveInteger(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback
  if (!/^\d+$/.test(raw) || Number(raw) <= 0 || !Number.isSafeInteger(Number(raw))) {
    throw new UsageError(`--${name} must be a positive integer, got "${raw}"`)
  }
  return Number(raw)
}
