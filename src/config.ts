import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { parseEnv } from 'node:util'
import { z } from 'zod'

const flag = z
  .enum(['0', '1', 'true', 'false'])
  .transform((v) => v === '1' || v === 'true')

const positiveInt = z.coerce.number().int().positive()

/** How long a streamed export over HTTP waits for its first bytes (QUARRY_STREAM_FIRST_BYTE_TIMEOUT_MS). */
export const DEFAULT_STREAM_FIRST_BYTE_TIMEOUT_MS = 10_000

/** Every environment variable Quarry reads, with its default; the README table mirrors this. */
export const configSchema = z.object({
  HOST: z.string().default('127.0.0.1').describe('address to listen on'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000).describe('port to listen on'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('pino level (debug also logs every query with its time, rows and bytes read)'),
  QUARRY_DATA_DIR: z.string().default('./data').describe("embedded engine's data directory (one process at a time)"),
  QUARRY_DEMO: flag.default(true).describe('create and seed the demo project on the first embedded start'),
  QUARRY_SECRET: z.string().min(16).optional().describe('key that signs cursors (16+ characters); unset, one is generated once and stored with the data'),
  CLICKHOUSE_URL: z.string().url().optional().describe('use this ClickHouse server over HTTP instead of the embedded engine (chdb)'),
  CLICKHOUSE_USER: z.string().default('default').describe('server user'),
  CLICKHOUSE_PASSWORD: z.string().default('').describe('server password'),
  CLICKHOUSE_DATABASE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain identifier')
    .default('quarry').describe("database holding Quarry's tables (both modes)"),
  /**
   * A cluster of the server's remote_servers: migrations then create Replicated*MergeTree tables
   * ON CLUSTER and Distributed tables under the names the queries use (needs CLICKHOUSE_URL).
   */
  CLICKHOUSE_CLUSTER: z
    .string()
    .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, 'must be a cluster name of remote_servers')
    .optional().describe("cluster of the servers' remote_servers: replicated, sharded tables ON CLUSTER (needs CLICKHOUSE_URL)"),
  QUARRY_MAX_CONCURRENT_QUERIES: positiveInt.default(4).describe('queries running at once (the query gate)'),
  QUARRY_READ_LANES: z.coerce.number().int().min(0).max(32).default(availableParallelism()).describe('embedded engine: chDB sessions that run reads beside the one line for parameterized statements (default: the cores); 0 runs every read on the line'),
  QUARRY_MAX_QUEUED_QUERIES: z.coerce.number().int().min(0).default(64).describe('queries waiting for the gate; beyond, 503 overloaded'),
  /**
   * Short, so that under overload a request is served promptly or refused at once, and the backlog a
   * burst leaves behind drains within about this long (src/clickhouse/gate.ts).
   */
  QUARRY_MAX_QUEUE_WAIT_MS: positiveInt.default(1000).describe('a query the gate would not start within this long, by its recent pace, is refused at once with 503 overloaded'),
  /** Seconds, fractions allowed (max_execution_time takes them). */
  QUARRY_QUERY_TIMEOUT_S: z.coerce.number().positive().default(10).describe('max_execution_time of dashboard queries, seconds (fractions allowed)'),
  QUARRY_EXPORT_TIMEOUT_S: positiveInt.default(3600).describe('max_execution_time of streamed exports, seconds'),
  /**
   * HTTP mode: a streamed export whose first bytes take longer counts as the server not answering;
   * max_execution_time alone would leave it an hour against a server that accepted and went silent.
   */
  QUARRY_STREAM_FIRST_BYTE_TIMEOUT_MS: positiveInt.default(DEFAULT_STREAM_FIRST_BYTE_TIMEOUT_MS).describe('with CLICKHOUSE_URL: how long a streamed export waits for its first bytes before 503'),
  /** Megabytes of response bodies `quarry serve` keeps for insights and charts; 0 turns the cache off. */
  QUARRY_RESPONSE_CACHE_MB: z.coerce.number().int().min(0).default(64).describe('response cache for insights and charts, MB; 0 turns it off'),
  QUARRY_SEALED: flag.default(true).describe('answer breakdowns, /metrics, /pages, charts and product routes from the sealed history; 0 reads sessions and events every time'),
  QUARRY_LIVE_LAG_MS: z.coerce.number().int().min(0).default(3000).describe('how far behind the newest inserts a sealed answer may read the events after C, ms (said in X-Quarry-Live-As-Of); 0 reads them as they are'),
  QUARRY_RATE_LIMIT: positiveInt.default(100).describe('requests per client per window'),
  QUARRY_RATE_WINDOW_S: positiveInt.default(10).describe('rate-limit window, seconds'),
  QUARRY_AUTH_FAILURE_LIMIT: positiveInt.default(20).describe('failed authentications per source address per window'),
  QUARRY_AUTH_CACHE_TTL_S: z.coerce.number().min(0).default(60).describe('how long a verified secret stays cached, seconds (0 disables)'),
  QUARRY_PROJECT_CACHE_TTL_S: z.coerce.number().min(0).default(60).describe('how long a project row (and its timezone) stays cached, seconds'),
  /** How many proxies in front of Quarry append to X-Forwarded-For; 0 trusts the socket's peer only. */
  QUARRY_TRUST_PROXY_HOPS: z.coerce.number().int().min(0).default(0).describe('proxies in front that append to X-Forwarded-For'),
  QUARRY_SHUTDOWN_GRACE_S: positiveInt.default(10).describe('how long in-flight requests may finish after SIGTERM, seconds'),
  /** When set, GET /metrics wants `Authorization: Bearer <this>`; unset, it is open like the health routes. */
  QUARRY_METRICS_TOKEN: z.string().min(16).optional().describe('GET /metrics wants Authorization: Bearer <this> (16+ characters); unset, it is open'),
  /** Traces go out over OTLP/HTTP (protobuf) once an endpoint is set; the SDK reads the other OTEL_* variables itself. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional().describe('send traces over OTLP/HTTP to this collector; unset, no tracing'),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional().describe('the traces URL itself, instead of <OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces'),
  OTEL_SERVICE_NAME: z.string().default('quarry').describe('service.name of the spans'),
  OTEL_SDK_DISABLED: flag.default(false).describe('1 turns tracing off whatever the endpoint'),
})

export type Config = z.infer<typeof configSchema>

export class ConfigError extends Error {}

/**
 * An empty variable counts as unset: compose files and .env templates write `NAME=` to mean "the
 * default", and a validation error for it ("invalid environment") would be a surprise.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, value]) => value !== '')))
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`)
    throw new ConfigError(`invalid environment:\n${lines.join('\n')}`)
  }
  return parsed.data
}

/**
 * Adds the variables of a `.env` file (when there is one) to `env`; a variable the real
 * environment sets, even to an empty value, is left alone.
 */
export function applyDotEnv(path: string, env: NodeJS.ProcessEnv = process.env): string[] {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw new ConfigError(`cannot read ${path}: ${(err as Error).message}`)
  }
  const added: string[] = []
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] !== undefined) continue
    env[name] = value
    added.push(name)
  }
  return added
}
