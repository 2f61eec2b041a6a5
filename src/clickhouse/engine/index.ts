import type { ClickHouseClient } from '@clickhouse/client'
import { ConfigError, type Config } from '../../config.ts'
import type { BackgroundLane } from './background.ts'
import type { LaneRead, LaneResult } from './read-lanes.ts'
import type { BackgroundKind } from '../run.ts'
import { EmbeddedEngineMissingError } from './errors.ts'
import { openHttpEngine } from './http.ts'

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
  /**
   * Whether a result's summary says what the statement read. A server's does; chDB's counts the
   * rows of the result instead (1 for a count over millions), so it is not reported at all.
   */
  readonly reportsReads: boolean
  /**
   * Where long background statements run beside requests, when the engine would otherwise run them
   * in the requests' line (chDB: background.ts), one lane per kind; a server runs statements side by
   * side anyway.
   */
  readonly background?: Readonly<Record<BackgroundKind, BackgroundLane>>
  /**
   * A read's result text, where the engine runs reads its own way (chDB: on the line, or beside it
   * on a read lane: read-lanes.ts); otherwise reads go through `client`.
   */
  read?(req: LaneRead): Promise<LaneResult>
  /** Stops a running query by id where the engine allows it (HTTP mode). */
  kill(queryId: string): Promise<void>
  close(): Promise<void>
}

export type EngineConfig = Pick<
  Config,
  | 'CLICKHOUSE_URL'
  | 'CLICKHOUSE_USER'
  | 'CLICKHOUSE_PASSWORD'
  | 'CLICKHOUSE_DATABASE'
  | 'CLICKHOUSE_CLUSTER'
  | 'QUARRY_DATA_DIR'
  | 'QUARRY_MAX_CONCURRENT_QUERIES'
  | 'QUARRY_READ_LANES'
  | 'QUARRY_QUERY_TIMEOUT_S'
  | 'QUARRY_EXPORT_TIMEOUT_S'
  | 'QUARRY_STREAM_FIRST_BYTE_TIMEOUT_MS'
>

export async function openEngine(config: EngineConfig): Promise<Engine> {
  if (config.CLICKHOUSE_CLUSTER && !config.CLICKHOUSE_URL) {
    throw new ConfigError('CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL: the embedded engine is a single node')
  }
  return config.CLICKHOUSE_URL ? openHttpEngine(config, config.CLICKHOUSE_URL) : (await loadEmbedded()).openEmbeddedEngine(config)
}

/** chDB (hundreds of MB, optional) is loaded only when no CLICKHOUSE_URL asks for a server instead. */
async function loadEmbedded(): Promise<typeof import('./embedded.ts')> {
  try {
    return await import('./embedded.ts')
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException
    if (code === 'ERR_MODULE_NOT_FOUND' && /['"]chdb['"/]/.test(message)) throw new EmbeddedEngineMissingError()
    throw err
  }
}
