import { parseArgs, type ParseArgsConfig } from 'node:util'

export const USAGE = `Usage: quarry <command> [options]

Commands:
  serve                                   run the HTTP service (HOST, PORT)
  migrate                                 apply the schema in sql/schema
  seed --project ID [--events N] [--days D] [--seed S] [--end ISO]
                                          generate deterministic synthetic traffic
  seed --preset 10m|100m [--seed S] [--end ISO]
                                          benchmark data: 100 projects of skewed sizes, 90 days
  projects create <id> [--name N] [--timezone IANA] [--organization ORG]
  projects list
  clients create --type read|write|root [--project ID] [--organization ORG] [--name N]
  clients list
  clients revoke <id>
  import --project ID [--format ndjson|csv|parquet] [--on-error skip|abort] FILE...
                                          load events (events columns or OpenPanel's export
                                          shape); a file again adds nothing; prints totals as JSON
`

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
