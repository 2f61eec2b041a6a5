/**
 * The peer: the SQL OpenPanel runs for the same breakdowns and /metrics, written by us from the
 * description in /work/shared/reference/openpanel-contract.md (§5.2, §5.5, §8.2) — not copied —
 * against an OpenPanel-shaped sessions table built from the same events.
 *
 * The table is a VersionedCollapsingMergeTree(sign, version) ordered by
 * (project_id, toDate(created_at), created_at) with flat columns, as OpenPanel's. It is filled
 * from Quarry's own sessions (FINAL), one `sign = 1` row per session: the state OpenPanel's table
 * reaches only once every −1/+1 pair its session writer produces has collapsed. That is the
 * peer's best case, so the ratio is conservative.
 */
import type { Runtime } from '../../src/runtime.ts'
import { findDimension, type Dimension } from '../../src/query/dimensions.ts'

export const PEER_TABLE = 'bench_openpanel.sessions'

const DDL = `CREATE TABLE IF NOT EXISTS ${PEER_TABLE} (
  id String, project_id String, profile_id String, device_id String,
  created_at DateTime64(3), ended_at DateTime64(3), is_bounce Bool,
  entry_origin LowCardinality(String), entry_path String, exit_origin LowCardinality(String), exit_path String,
  screen_view_count Int32, revenue Float64, event_count Int32, duration UInt32,
  country LowCardinality(FixedString(2)), region LowCardinality(String), city String,
  longitude Nullable(Float32), latitude Nullable(Float32),
  device LowCardinality(String), brand LowCardinality(String), model LowCardinality(String),
  browser LowCardinality(String), browser_version LowCardinality(String), os LowCardinality(String), os_version LowCardinality(String),
  utm_medium String, utm_source String, utm_campaign String, utm_content String, utm_term String,
  referrer String, referrer_name String, referrer_type LowCardinality(String),
  sign Int8, version UInt64
)
ENGINE = VersionedCollapsingMergeTree(sign, version)
PARTITION BY toYYYYMM(created_at)
ORDER BY (project_id, toDate(created_at), created_at)`

/** Builds the peer table once per data directory (again when the session count no longer matches). */
export async function buildPeer(rt: Runtime): Promise<{ sessions: number; built: boolean; seconds: number }> {
  const started = performance.now()
  await rt.runner.command({ name: 'peer_db', sql: 'CREATE DATABASE IF NOT EXISTS bench_openpanel', params: {} })
  await rt.runner.command({ name: 'peer_ddl', sql: DDL, params: {} })
  const count = async (sql: string) =>
    Number((await rt.runner.rows<{ n: number }>({ name: 'peer_count', sql, params: {} }, { timeoutS: 600 }))[0]?.n ?? 0)
  const ours = await count('SELECT count() AS n FROM (SELECT id FROM sessions FINAL)')
  const theirs = await count(`SELECT count() AS n FROM ${PEER_TABLE}`)
  if (ours === theirs) return { sessions: theirs, built: false, seconds: 0 }
  await rt.runner.command({ name: 'peer_truncate', sql: `TRUNCATE TABLE ${PEER_TABLE}`, params: {} })
  await rt.runner.command({
    name: 'peer_fill',
    sql: `INSERT INTO ${PEER_TABLE}
          SELECT id, project_id, profile_id, device_id, created_at, ended_at, is_bounce,
            entry_origin, entry_path, exit_origin, exit_path,
            toInt32(screen_view_count), toFloat64(revenue), toInt32(event_count), toUInt32(least(duration, 4294967295)),
            toFixedString(substring(country, 1, 2), 2), region, city, NULL, NULL,
            device, brand, model, browser, browser_version, os, os_version,
            utm_medium, utm_source, utm_campaign, utm_content, utm_term,
            referrer, referrer_name, referrer_type, 1, 1
          FROM sessions FINAL
          SETTINGS max_insert_threads = 2`,
    params: {},
  })
  return { sessions: await count(`SELECT count() AS n FROM ${PEER_TABLE}`), built: true, seconds: Math.round((performance.now() - started) / 100) / 10 }
}

/** OpenPanel's columns for the breakdowns it has (entry/exit pages are another route there). */
export const PEER_PREFIX: Record<string, string> = { region: 'country', city: 'country', browser_version: 'browser', os_version: 'os' }

export interface PeerWindow {
  project: string
  /** UTC instants 'YYYY-MM-DD HH:MM:SS.mmm', the same window Quarry resolved; OpenPanel's BETWEEN includes its end. */
  from: string
  to: string
}

export interface PeerStatement {
  sql: string
  params: Record<string, unknown>
}

/** getTopGeneric (§5.5): sum(sign) counts over sessions FINAL, top 1000 by sessions. */
export function peerBreakdown(dimension: Dimension, w: PeerWindow): PeerStatement[] {
  const prefix = PEER_PREFIX[dimension.name]
  const select = prefix ? `${prefix} AS prefix, ` : ''
  const group = prefix ? `prefix, ${dimension.column}` : dimension.column
  return [
    {
      sql: `SELECT ${select}nullIf(${dimension.column}, '') AS name, sum(sign) AS sessions,
              sum(sign * screen_view_count) AS pageviews, sum(revenue * sign) AS revenue
            FROM ${PEER_TABLE} FINAL
            WHERE project_id = {project:String}
              AND created_at BETWEEN toDateTime64({from:String}, 3) AND toDateTime64({to:String}, 3)
            GROUP BY ${group}
            HAVING sum(sign) > 0
            ORDER BY sessions DESC
            LIMIT 1000
            FORMAT JSONEachRow`,
      params: { project: w.project, from: w.from, to: w.to },
    },
  ]
}

/** getMetricsFromSessions (§5.2), day buckets, plus the revenue query; OpenPanel runs both. */
export function peerMetrics(w: PeerWindow): PeerStatement[] {
  const params = { project: w.project, from: w.from, to: w.to }
  return [
    {
      sql: `SELECT toStartOfDay(created_at) AS date,
              round(sum(sign * is_bounce) * 100.0 / sum(sign), 2) AS bounce_rate,
              uniqIf(profile_id, sign > 0) AS unique_visitors,
              sum(sign) AS total_sessions,
              round(avgIf(duration, duration > 0 AND sign > 0), 2) / 1000 AS avg_session_duration,
              sum(sign * screen_view_count) AS total_screen_views,
              round(sum(sign * screen_view_count) * 1.0 / sum(sign), 2) AS views_per_session
            FROM ${PEER_TABLE}
            WHERE created_at BETWEEN toDateTime64({from:String}, 3) AND toDateTime64({to:String}, 3)
              AND project_id = {project:String}
            GROUP BY date WITH ROLLUP
            HAVING sum(sign) > 0
            ORDER BY date ASC WITH FILL
              FROM toStartOfDay(toDateTime(toDateTime64({from:String}, 3))) TO toDateTime(toDateTime64({to:String}, 3)) STEP toIntervalDay(1)
            FORMAT JSONEachRow`,
      params,
    },
    {
      sql: `SELECT toStartOfDay(created_at) AS date, sum(revenue) AS total_revenue
            FROM events
            WHERE project_id = {project:String} AND name = 'revenue' AND revenue > 0
              AND created_at BETWEEN toDateTime64({from:String}, 3) AND toDateTime64({to:String}, 3)
            GROUP BY date WITH ROLLUP
            FORMAT JSONEachRow`,
      params,
    },
  ]
}

/** The peer's statements for a route Quarry explained (its resolved window), if OpenPanel has that route. */
export function peerFor(endpoint: string, project: string, params: Record<string, unknown>): PeerStatement[] | undefined {
  const w = { project, from: String(params.from), to: String(params.to) }
  if (endpoint === 'metrics') return peerMetrics(w)
  const dimension = findDimension(endpoint)
  if (dimension && (dimension.filterable || PEER_PREFIX[dimension.name])) return peerBreakdown(dimension, w)
  return undefined
}
