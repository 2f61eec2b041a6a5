import { createClient, type ClickHouseClient } from '@clickhouse/client'
import { Session } from 'chdb'
import { createChdbConnection } from 'chdb/connection'
import { mkdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { Readable } from 'node:stream'
import { ConfigError, DEFAULT_STREAM_FIRST_BYTE_TIMEOUT_MS, type Config } from '../config.ts'
import { CLUSTER_QUERY_SETTINGS, quote, registerCluster } from './cluster.ts'
import { EngineUnavailableError } from './errors.ts'
import { linkedSignal } from './signals.ts'

export type EngineMode = 'embedded' | 'http'

export interface RawStreamRequest {
  /** A complete statement including its FORMAT clause. */
  sql: string
  params: Record<string, unknown>
  queryId: string
  signal?: AbortSignal
}

/**
 * The one place that knows which ClickHouse is in use. Everything above it sees a
 * `@clickhouse/client` and a raw byte stream.
 */
export interface Engine {
  readonly mode: EngineMode
  readonly database: string
  readonly client: ClickHouseClient
  /** Result bytes as the engine produces them; never holds the whole result in memory. */
  streamRaw(req: RawStreamRequest): AsyncIterable<Uint8Array>
  /** Stops a running query by id where the engine allows it (HTTP mode). */
  kill(queryId: string): Promise<void>
  close(): Promise<void>
}

export class DataDirectoryLockedError extends Error {
  constructor(readonly dir: string) {
    super(
      `the data directory ${dir} is locked by another process (is a Quarry server running on it?); ` +
        'stop that process or point QUARRY_DATA_DIR elsewhere',
    )
  }
}

type EngineConfig = Pick<
  Config,
  | 'CLICKHOUSE_URL'
  | 'CLICKHOUSE_USER'
  | 'CLICKHOUSE_PASSWORD'
  | 'CLICKHOUSE_DATABASE'
  | 'CLICKHOUSE_CLUSTER'
  | 'QUARRY_DATA_DIR'
  | 'QUARRY_MAX_CONCURRENT_QUERIES'
  | 'QUARRY_QUERY_TIMEOUT_S'
  | 'QUARRY_EXPORT_TIMEOUT_S'
  | 'QUARRY_STREAM_FIRST_BYTE_TIMEOUT_MS'
>

export async function openEngine(config: EngineConfig): Promise<Engine> {
  if (config.CLICKHOUSE_CLUSTER && !config.CLICKHOUSE_URL) {
    throw new ConfigError('CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL: the embedded engine is a single node')
  }
  return config.CLICKHOUSE_URL ? openHttpEngine(config, config.CLICKHOUSE_URL) : openEmbeddedEngine(config)
}

/**
 * Idle keep-alive sockets are dropped after this long, below the server's keep_alive_timeout
 * (3 s in old ClickHouse releases, 10 s and now 30 s by default; docker/ sets 10 s), so a reused
 * socket is never one the server has just closed.
 */
export const KEEP_ALIVE_IDLE_MS = 2500
/** How long an ON CLUSTER statement may wait for every node (the server's distributed_ddl_task_timeout default). */
const DISTRIBUTED_DDL_TIMEOUT_S = 180
/** Slack between the server's own limit and the client giving up on a silent socket. */
const REQUEST_TIMEOUT_MARGIN_S = 30
/** How long a KILL QUERY may take to be acknowledged (it is asynchronous on the server). */
const KILL_TIMEOUT_MS = 5000
/** Our query ids are UUIDs; anything else is never spliced into a KILL statement. */
const QUERY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * The HTTP client's options. request_timeout is how long a socket may stay silent; it must outlast
 * the longest max_execution_time (a streamed export's) and an ON CLUSTER statement, so that the
 * server's own limits, which answer with a proper error, always fire first.
 */
export function httpClientOptions(config: EngineConfig, url: string) {
  const longestS = Math.max(config.QUARRY_QUERY_TIMEOUT_S, config.QUARRY_EXPORT_TIMEOUT_S, DISTRIBUTED_DDL_TIMEOUT_S)
  return {
    url,
    username: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
    database: config.CLICKHOUSE_DATABASE,
    compression: { response: true },
    // The gate's queries, plus room for a readiness probe and a kill while all slots are busy.
    max_open_connections: config.QUARRY_MAX_CONCURRENT_QUERIES + 2,
    keep_alive: { enabled: true, idle_socket_ttl: KEEP_ALIVE_IDLE_MS },
    request_timeout: Math.ceil((longestS + REQUEST_TIMEOUT_MARGIN_S) * 1000),
    // Cluster mode's settings travel with every request (see cluster.ts); the query SQL stays the same.
    ...(config.CLICKHOUSE_CLUSTER ? { clickhouse_settings: { ...CLUSTER_QUERY_SETTINGS } } : {}),
  }
}

async function openHttpEngine(config: EngineConfig, url: string): Promise<Engine> {
  const database = config.CLICKHOUSE_DATABASE
  const cluster = config.CLICKHOUSE_CLUSTER
  const admin = createClient({ url, username: config.CLICKHOUSE_USER, password: config.CLICKHOUSE_PASSWORD })
  try {
    await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}${cluster ? ` ON CLUSTER ${quote(cluster)}` : ''}` })
  } finally {
    await admin.close()
  }
  const client = createClient(httpClientOptions(config, url))
  if (cluster) registerCluster(client, { cluster, database })
  return httpEngine(client, database, config.QUARRY_STREAM_FIRST_BYTE_TIMEOUT_MS)
}

/**
 * Ends a response that has not begun within `ms`. The client stops listening to its abort signal
 * once the headers are in, so from then until the first bytes the deadline destroys the body itself.
 */
function firstBytesDeadline(ms: number) {
  const controller = new AbortController()
  let body: Readable | undefined
  const expire = () => body?.destroy(new Error(`no first bytes within ${ms} ms`))
  const timer = setTimeout(() => {
    controller.abort()
    expire()
  }, ms)
  return {
    signal: controller.signal,
    get expired() {
      return controller.signal.aborted
    },
    watch(stream: Readable) {
      body = stream
      if (controller.signal.aborted) expire()
    },
    met: () => clearTimeout(timer),
  }
}

/**
 * An engine over an HTTP client whose database exists (tests build one for an unreachable server).
 * A streamed export must begin within `firstByteTimeoutMs`; once it streams, only its
 * max_execution_time bounds it.
 */
export function httpEngine(
  client: ClickHouseClient,
  database: string,
  firstByteTimeoutMs = DEFAULT_STREAM_FIRST_BYTE_TIMEOUT_MS,
): Engine {
  const engine: Engine = {
    mode: 'http',
    database,
    client,
    async *streamRaw(req) {
      const deadline = firstBytesDeadline(firstByteTimeoutMs)
      const linked = linkedSignal([req.signal, deadline.signal])
      try {
        const result = await client.exec({
          query: req.sql,
          query_params: req.params,
          query_id: req.queryId,
          abort_signal: linked.signal,
        })
        deadline.watch(result.stream)
        for await (const chunk of result.stream) {
          deadline.met()
          yield chunk as Uint8Array
        }
      } catch (err) {
        if (!deadline.expired) throw err
        // A silent server will hardly answer a kill: send it, but do not wait for it.
        void engine.kill(req.queryId).catch(() => {})
        throw new EngineUnavailableError(`a streamed query sent nothing within ${firstByteTimeoutMs} ms`)
      } finally {
        deadline.met()
        linked.done()
      }
    },
    async kill(queryId) {
      // Bounded: a server that does not answer the query will not answer this either.
      await client.command({
        query: 'KILL QUERY WHERE query_id = {id:String} ASYNC',
        query_params: { id: queryId },
        abort_signal: AbortSignal.timeout(KILL_TIMEOUT_MS),
      })
    },
    close: () => client.close(),
  }
  return engine
}

/**
 * Whether another live process runs ClickHouse on `dir`. chDB reports a held lock only as a generic
 * connection failure (the reason goes to the native stderr), so the status file, which ClickHouse
 * writes with its PID while it runs and removes on a clean exit, is asked first.
 */
function lockedByAnotherProcess(dir: string): boolean {
  let status: string
  try {
    status = readFileSync(join(dir, 'status'), 'utf8')
  } catch {
    return false
  }
  const pid = Number(/^PID: (\d+)$/m.exec(status)?.[1])
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    // EPERM: alive, but another user's; ESRCH: a stale file left by a crash, which chDB takes over.
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function openEmbeddedEngine(config: EngineConfig): Promise<Engine> {
  const dir = resolve(config.QUARRY_DATA_DIR)
  const database = config.CLICKHOUSE_DATABASE
  mkdirSync(dir, { recursive: true })
  if (lockedByAnotherProcess(dir)) throw new DataDirectoryLockedError(dir)
  let connection: ReturnType<typeof createChdbConnection>
  try {
    connection = createChdbConnection({ path: dir })
  } catch (err) {
    if (/Cannot lock file/.test(String((err as Error).message))) throw new DataDirectoryLockedError(dir)
    throw err
  }
  // chdb declares the Connection contract from its own copy of @clickhouse/client-common;
  // the shapes are the same, only the declaration files differ.
  const client = createClient({ connection } as unknown as Parameters<typeof createClient>[0])
  // chDB keeps one engine per process and data directory, so USE applies to every session on it.
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` })
  await client.command({ query: `USE ${database}` })
  return {
    mode: 'embedded',
    database,
    client,
    async *streamRaw(req) {
      // The connection's query() buffers whole results; exports go through chDB's native streaming.
      // Each stream needs a session of its own (one active stream per session).
      const session = new Session(dir)
      await session.queryAsync(`USE ${database}`)
      const stream = session.queryStreamBind(req.sql, req.params, { signal: req.signal })
      // chDB looks at the signal only when asked for the next block; a consumer that is gone may
      // never ask again (a client that left before the response started), so an abort also
      // cancels the stream and closes its session here and now (both wait for a fetch in flight).
      const onAbort = () => {
        stream.cancel()
        session.close()
      }
      req.signal?.addEventListener('abort', onAbort, { once: true })
      try {
        for await (const chunk of stream) yield chunk.raw()
      } finally {
        req.signal?.removeEventListener('abort', onAbort)
        stream.cancel()
        session.close()
      }
    },
    // chDB has no query ids of ours, but every read carries its id as log_comment (see finalSql), and
    // KILL QUERY from another session stops it; the shared connection runs one query at a time and
    // is busy with the very query to stop. Without a kill, max_execution_time would bound it.
    async kill(queryId) {
      if (!QUERY_ID.test(queryId)) return
      const session = new Session(dir)
      try {
        await session.queryAsync(`KILL QUERY WHERE Settings['log_comment'] = '${queryId}' ASYNC FORMAT Null`, { timeout: KILL_TIMEOUT_MS })
      } finally {
        session.close()
      }
    },
    close: () => client.close(),
  }
}
