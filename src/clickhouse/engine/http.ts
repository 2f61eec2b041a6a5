import { createClient, type ClickHouseClient } from '@clickhouse/client'
import { randomUUID } from 'node:crypto'
import type { Readable } from 'node:stream'
import { DEFAULT_STREAM_FIRST_BYTE_TIMEOUT_MS } from '../../config.ts'
import { CLUSTER_QUERY_SETTINGS, quote, registerCluster } from '../cluster.ts'
import { EngineUnavailableError } from '../errors.ts'
import { linkedSignal } from '../signals.ts'
import type { Engine, EngineConfig } from './index.ts'
import { KILL_TIMEOUT_MS } from './kill.ts'

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

export async function openHttpEngine(config: EngineConfig, url: string): Promise<Engine> {
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
    reportsReads: true,
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
 * A statement on a server that stops where it runs once `signal` is aborted (a build step at
 * shutdown): the server does not notice a closed connection until it writes, and a build step
 * writes nothing back. The call fails once the server has taken the kill (asynchronous there: the
 * step ends moments later, its rows never registered by a build that stopped). Embedded, chDB's
 * call cannot be left while it runs, so only the lanes take a signal there.
 */
export async function commandOnServer(engine: Engine, sql: string, params: Record<string, unknown>, signal: AbortSignal): Promise<void> {
  const queryId = randomUUID()
  let killing: Promise<void> | undefined
  const onAbort = () => (killing = engine.kill(queryId).catch(() => {}))
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    await engine.client.command({ query: sql, query_params: params, query_id: queryId, abort_signal: signal })
  } finally {
    signal.removeEventListener('abort', onAbort)
    await killing
  }
}
