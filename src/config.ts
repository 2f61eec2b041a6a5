import { z } from 'zod'

const flag = z
  .enum(['0', '1', 'true', 'false'])
  .transform((v) => v === '1' || v === 'true')

const positiveInt = z.coerce.number().int().positive()

/** How long a streamed export over HTTP waits for its first bytes (QUARRY_STREAM_FIRST_BYTE_TIMEOUT_MS). */
export const DEFAULT_STREAM_FIRST_BYTE_TIMEOUT_MS = 10_000

/** Every environment variable Quarry reads, with its default; the README table mirrors this. */
export const configSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  QUARRY_DATA_DIR: z.string().default('./data'),
  QUARRY_DEMO: flag.default(true),
  QUARRY_SECRET: z.string().min(16).optional(),
  CLICKHOUSE_URL: z.string().url().optional(),
  CLICKHOUSE_USER: z.string().default('default'),
  CLICKHOUSE_PASSWORD: z.string().default(''),
  CLICKHOUSE_DATABASE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain identifier')
    .default('quarry'),
  /**
   * A cluster of the server's remote_servers: migrations then create Replicated*MergeTree tables
   * ON CLUSTER and Distributed tables under the names the queries use (needs CLICKHOUSE_URL).
   */
  CLICKHOUSE_CLUSTER: z
    .string()
    .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/, 'must be a cluster name of remote_servers')
    .optional(),
  QUARRY_MAX_CONCURRENT_QUERIES: positiveInt.default(4),
  QUARRY_MAX_QUEUED_QUERIES: z.coerce.number().int().min(0).default(64),
  /** Seconds, fractions allowed (max_execution_time takes them). */
  QUARRY_QUERY_TIMEOUT_S: z.coerce.number().positive().default(10),
  QUARRY_EXPORT_TIMEOUT_S: positiveInt.default(3600),
  /**
   * HTTP mode: a streamed export whose first bytes take longer counts as the server not answering;
   * max_execution_time alone would leave it an hour against a server that accepted and went silent.
   */
  QUARRY_STREAM_FIRST_BYTE_TIMEOUT_MS: positiveInt.default(DEFAULT_STREAM_FIRST_BYTE_TIMEOUT_MS),
  /** Megabytes of response bodies `quarry serve` keeps for insights and charts; 0 turns the cache off. */
  QUARRY_RESPONSE_CACHE_MB: z.coerce.number().int().min(0).default(64),
  /** `quarry serve` answers /pages from rollups of the events before the last hour where they hold (src/services/page-rollups/index.ts). */
  QUARRY_PAGE_ROLLUPS: flag.default(true),
  QUARRY_SEALED: flag.default(true),
  QUARRY_RATE_LIMIT: positiveInt.default(100),
  QUARRY_RATE_WINDOW_S: positiveInt.default(10),
  QUARRY_AUTH_FAILURE_LIMIT: positiveInt.default(20),
  QUARRY_AUTH_CACHE_TTL_S: z.coerce.number().min(0).default(60),
  QUARRY_PROJECT_CACHE_TTL_S: z.coerce.number().min(0).default(60),
  /** How many proxies in front of Quarry append to X-Forwarded-For; 0 trusts the socket's peer only. */
  QUARRY_TRUST_PROXY_HOPS: z.coerce.number().int().min(0).default(0),
  QUARRY_SHUTDOWN_GRACE_S: positiveInt.default(10),
})

export type Config = z.infer<typeof configSchema>

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env)
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`)
    throw new ConfigError(`invalid environment:\n${lines.join('\n')}`)
  }
  return parsed.data
}
