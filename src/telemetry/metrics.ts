import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'

/** What the query gate shows at a scrape (src/clickhouse/gate.ts). */
export interface GateState {
  readonly active: number
  readonly queued: number
}

/** What the response cache holds at a scrape (src/http/cache/lru.ts). */
export interface CacheState {
  readonly size: number
  readonly bytes: number
}

/** Per project, the instant its newest sealed build holds the history before. */
export type SealedUntil = () => Iterable<[projectId: string, closedAt: Date]>

const SECONDS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
const BUILD_SECONDS = [1, 2.5, 5, 10, 30, 60, 120, 300, 900]

/**
 * Every Prometheus metric Quarry exports, in one registry per instance: tests build many apps in
 * one process, and prom-client's global registry would refuse the second. The gauges read their
 * sources when scraped; `watch` connects them once the gate, cache and sealed history exist.
 */
export function createMetrics(opts: { process?: boolean } = {}) {
  const registry = new Registry()
  const registers = [registry]
  const sources: { gate?: GateState; cache?: CacheState; sealedUntil?: SealedUntil } = {}
  if (opts.process) collectDefaultMetrics({ register: registry, prefix: 'quarry_' })

  new Gauge({
    name: 'quarry_query_gate_active',
    help: 'Queries holding a slot of the query gate',
    registers,
    collect() {
      this.set(sources.gate?.active ?? 0)
    },
  })
  new Gauge({
    name: 'quarry_query_gate_queued',
    help: 'Queries waiting for a slot of the query gate',
    registers,
    collect() {
      this.set(sources.gate?.queued ?? 0)
    },
  })
  new Gauge({
    name: 'quarry_response_cache_entries',
    help: 'Responses kept by the response cache',
    registers,
    collect() {
      this.set(sources.cache?.size ?? 0)
    },
  })
  new Gauge({
    name: 'quarry_response_cache_bytes',
    help: 'Bytes the response cache counts against QUARRY_RESPONSE_CACHE_MB',
    registers,
    collect() {
      this.set(sources.cache?.bytes ?? 0)
    },
  })
  new Gauge({
    name: 'quarry_sealed_until_lag_seconds',
    help: "Per project, how far the newest sealed build's instant C is behind now",
    labelNames: ['project'],
    registers,
    collect() {
      this.reset()
      const now = Date.now()
      for (const [project, closedAt] of sources.sealedUntil?.() ?? []) this.set({ project }, (now - closedAt.getTime()) / 1000)
    },
  })

  return {
    registry,
    httpDuration: new Histogram({
      name: 'quarry_http_request_duration_seconds',
      help: 'HTTP requests until the response head, by route template (unmatched paths as "unmatched"), method and status; _count counts them',
      labelNames: ['method', 'route', 'status'],
      buckets: SECONDS,
      registers,
    }),
    admissionRefusals: new Counter({
      name: 'quarry_admission_refusals_total',
      help: 'Requests refused with 503 overloaded before any query of their own, because too many were in progress (a cache hit never is)',
      registers,
    }),
    authRefusals: new Counter({
      name: 'quarry_auth_refusals_total',
      help: 'Requests refused by authentication, by reason (missing, malformed_id, unknown_client, revoked, wrong_secret, write_client)',
      labelNames: ['reason'],
      registers,
    }),
    rateLimitRefusals: new Counter({
      name: 'quarry_rate_limit_refusals_total',
      help: "Requests refused with 429: a client over its budget (client) or an address over its failed authentications (address)",
      labelNames: ['limit'],
      registers,
    }),
    cacheRequests: new Counter({
      name: 'quarry_response_cache_requests_total',
      help: 'Requests through the response cache, by outcome (hit, miss, coalesced, bypass)',
      labelNames: ['outcome'],
      registers,
    }),
    engineDuration: new Histogram({
      name: 'quarry_engine_query_duration_seconds',
      help: 'Engine statements from their slot in the gate to their last byte, by statement name',
      labelNames: ['statement'],
      buckets: SECONDS,
      registers,
    }),
    engineRowsRead: new Counter({ name: 'quarry_engine_rows_read_total', help: 'Rows the engine read, by statement name (a ClickHouse server; chDB does not report them)', labelNames: ['statement'], registers }),
    engineBytesRead: new Counter({ name: 'quarry_engine_bytes_read_total', help: 'Bytes the engine read, by statement name (a ClickHouse server; chDB does not report them)', labelNames: ['statement'], registers }),
    engineReads: new Counter({
      name: 'quarry_engine_reads_total',
      help: 'Reads the embedded engine ran, by where: on the line for parameterized statements, or on a read lane beside it',
      labelNames: ['on'],
      registers,
    }),
    engineErrors: new Counter({
      name: 'quarry_engine_errors_total',
      help: 'Failed engine statements, by statement name and class (timeout, unavailable, query, overloaded, cancelled)',
      labelNames: ['statement', 'class'],
      registers,
    }),
    exportRows: new Counter({
      name: 'quarry_export_rows_total',
      help: 'Events exported, by format (json pages and ndjson streams; the other streamed formats count bytes only)',
      labelNames: ['format'],
      registers,
    }),
    exportBytes: new Counter({ name: 'quarry_export_bytes_total', help: 'Bytes of exported events from the engine, by format', labelNames: ['format'], registers }),
    sealedLiveReads: new Counter({
      name: 'quarry_sealed_live_reads_total',
      help: 'Sealed answers by how they read the events after C: snapshots of them as they are (current), of a state within QUARRY_LIVE_LAG_MS before (earlier), or computed by the request (computed)',
      labelNames: ['read'],
      registers,
    }),
    sealedBuildDuration: new Histogram({
      name: 'quarry_sealed_build_duration_seconds',
      help: 'Kept builds of the sealed history, by project',
      labelNames: ['project'],
      buckets: BUILD_SECONDS,
      registers,
    }),
    /** Connects a gauge family to what it reads; a later call replaces the source. */
    watch(source: Partial<typeof sources>) {
      Object.assign(sources, source)
    },
  }
}

export type Metrics = ReturnType<typeof createMetrics>
