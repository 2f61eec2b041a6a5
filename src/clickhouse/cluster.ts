/**
 * Cluster mode (CLICKHOUSE_CLUSTER): the single-node schema of sql/schema, rewritten statement by
 * statement for a ClickHouse cluster, so that there is one schema to maintain.
 *
 * Layout:
 * - `events`, `sessions` and `session_timeline` are sharded. Each node holds `<name>_local`, a
 *   Replicated*MergeTree replicated within its shard (`{shard}` in the Keeper path), and `<name>`, a
 *   Distributed table over the locals under the name the queries use. Events and sessions are
 *   sharded by project and session, so every event of a session lands on one shard: `sessions_mv`
 *   then runs on each node over the local events into the local sessions and sees whole sessions,
 *   exactly as on one server. `session_timeline_mv` likewise fills each node's timeline from its
 *   own events.
 * - Every other table (projects, clients, profiles, event_meta, quarry_settings, schema_migrations)
 *   is small: it keeps its name and is replicated to every node (one Keeper path without the shard
 *   macro), so joins and lookups read a complete local copy.
 * - Every statement runs ON CLUSTER.
 */

export interface ClusterTarget {
  /** A cluster of the servers' remote_servers. */
  cluster: string
  /** The database holding Quarry's tables, the same on every node. */
  database: string
}

/**
 * The sharded tables and their sharding keys. The first two place a session's events and the
 * session's row on the same shard: sessions.id is events.session_id. The timeline has only the
 * hash of the session id, so its backfill places a session's rows by that; /pages computes time
 * on page where the rows are gathered (window functions run on the initiator), so placement
 * decides nothing but balance. `event_inserts` is written by a view on each node's events, so it
 * is sharded too; it is only ever counted.
 */
export const SHARDING_KEYS: Readonly<Record<string, string>> = {
  events: 'cityHash64(project_id, session_id)',
  sessions: 'cityHash64(project_id, id)',
  session_timeline: 'cityHash64(project_id, session_key)',
  event_inserts: 'cityHash64(project_id)',
}

export const localName = (table: string): string => `${table}_local`

/** Keeper paths: per shard for the sharded tables, one for all nodes for the others. */
export const SHARDED_PATH = '/clickhouse/tables/{shard}/{database}/{table}'
export const EVERYWHERE_PATH = '/clickhouse/tables/all/{database}/{table}'
export const REPLICA_MACRO = '{replica}'

const IDENT = '([A-Za-z_][A-Za-z0-9_]*)'
const isSharded = (table: string) => Object.hasOwn(SHARDING_KEYS, table)

/** A ClickHouse string literal. */
export const quote = (value: string): string => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`

export class ClusterDdlError extends Error {}

/** The index of the parenthesis closing the one at `open`, skipping quoted text. */
function closingParen(text: string, open: number): number {
  let depth = 0
  let quoteChar: string | undefined
  for (let i = open; i < text.length; i++) {
    const ch = text[i]!
    if (quoteChar) {
      if (ch === '\\') i++
      else if (ch === quoteChar) quoteChar = undefined
      continue
    }
    if (ch === "'" || ch === '"' || ch === '`') quoteChar = ch
    else if (ch === '(') depth++
    else if (ch === ')' && --depth === 0) return i
  }
  throw new ClusterDdlError('unbalanced parentheses')
}

const ENGINE = /^(\s*ENGINE\s*=\s*)(\w*)MergeTree\b(?:\s*\(([^()]*)\))?/i

/** `ENGINE = XMergeTree(args)` → `ENGINE = ReplicatedXMergeTree('path', '{replica}', args)`. */
function replicatedEngine(tail: string, path: string, statement: string): string {
  const m = ENGINE.exec(tail)
  if (!m) throw new ClusterDdlError(`cluster mode needs a *MergeTree engine: ${firstLine(statement)}`)
  const family = m[2] ?? ''
  if (/^Replicated/i.test(family)) throw new ClusterDdlError(`already replicated: ${firstLine(statement)}`)
  const args = (m[3] ?? '').trim()
  const engine = `${m[1]}Replicated${family}MergeTree(${quote(path)}, ${quote(REPLICA_MACRO)}${args ? `, ${args}` : ''})`
  return engine + tail.slice(m[0].length)
}

const firstLine = (sql: string) => sql.split('\n')[0]!.trim()

function createTable(sql: string, target: ClusterTarget, m: RegExpExecArray): string[] {
  const ifNotExists = m[1] ? 'IF NOT EXISTS ' : ''
  const table = m[2]!
  const open = m[0].length - 1
  const close = closingParen(sql, open)
  const columns = sql.slice(open, close + 1)
  const tail = sql.slice(close + 1)
  const on = `ON CLUSTER ${quote(target.cluster)}`
  if (!isSharded(table)) {
    return [`CREATE TABLE ${ifNotExists}${table} ${on} ${columns}${replicatedEngine(tail, EVERYWHERE_PATH, sql)}`]
  }
  const local = localName(table)
  return [
    `CREATE TABLE ${ifNotExists}${local} ${on} ${columns}${replicatedEngine(tail, SHARDED_PATH, sql)}`,
    `CREATE TABLE ${ifNotExists}${table} ${on} AS ${local}\n` +
      `ENGINE = Distributed(${quote(target.cluster)}, ${quote(target.database)}, ${quote(local)}, ${SHARDING_KEYS[table]})`,
  ]
}

/** Table references of a SELECT (FROM x, JOIN x), by plain name. */
const TABLE_REFERENCE = new RegExp(`\\b(FROM|JOIN)(\\s+)${IDENT}\\b(?!\\s*\\()`, 'gi')

function createMaterializedView(sql: string, target: ClusterTarget, m: RegExpExecArray): string[] {
  const ifNotExists = m[1] ? 'IF NOT EXISTS ' : ''
  const [view, destination, select] = [m[2]!, m[3]!, m[4]!]
  const sources = [...select.matchAll(TABLE_REFERENCE)].map((r) => r[3]!)
  const readsSharded = sources.some(isSharded)
  if (readsSharded !== isSharded(destination)) {
    throw new ClusterDdlError(
      `materialized view ${view}: a view over sharded tables must write into a sharded table and the reverse ` +
        `(sharded: ${Object.keys(SHARDING_KEYS).join(', ')})`,
    )
  }
  // Each node's view reads what is inserted into its local tables and writes into its local target.
  const body = select.replace(TABLE_REFERENCE, (whole, keyword: string, space: string, name: string) =>
    isSharded(name) ? `${keyword}${space}${localName(name)}` : whole,
  )
  const to = isSharded(destination) ? localName(destination) : destination
  return [`CREATE MATERIALIZED VIEW ${ifNotExists}${view} ON CLUSTER ${quote(target.cluster)} TO ${to} AS\n${body}`]
}

const COLUMN_COMMAND = /^(ADD|DROP|MODIFY|RENAME|COMMENT)\s+COLUMN\b/i

/** The comma-separated parts of an ALTER's commands, commas inside types (`SimpleAggregateFunction(f, T)`) kept. */
function topLevelParts(commands: string): string[] {
  const parts: string[] = []
  let depth = 0
  let start = 0
  for (let i = 0; i < commands.length; i++) {
    const ch = commands[i]
    if (ch === '(') depth++
    else if (ch === ')') depth--
    else if (ch === ',' && depth === 0) {
      parts.push(commands.slice(start, i))
      start = i + 1
    }
  }
  return [...parts, commands.slice(start)]
}

function alterTable(target: ClusterTarget, m: RegExpExecArray): string[] {
  const [table, commands] = [m[1]!, m[2]!]
  const on = `ON CLUSTER ${quote(target.cluster)}`
  if (!isSharded(table)) return [`ALTER TABLE ${table} ${on} ${commands}`]
  const statements = [`ALTER TABLE ${localName(table)} ${on} ${commands}`]
  // A Distributed table carries the columns too; other changes (indexes, TTL, …) concern storage only.
  const columnOnly = topLevelParts(commands).every((c) => COLUMN_COMMAND.test(c.trim()))
  if (columnOnly) statements.push(`ALTER TABLE ${table} ${on} ${commands}`)
  return statements
}

function dropTable(target: ClusterTarget, m: RegExpExecArray): string[] {
  const [kind, ifExists, table] = [m[1]!.toUpperCase(), m[2] ? 'IF EXISTS ' : '', m[3]!]
  const on = `ON CLUSTER ${quote(target.cluster)} SYNC`
  if (kind === 'TABLE' && isSharded(table)) {
    return [`DROP TABLE ${ifExists}${table} ${on}`, `DROP TABLE ${ifExists}${localName(table)} ${on}`]
  }
  return [`DROP ${kind} ${ifExists}${table} ${on}`]
}

const FORMS: [RegExp, (sql: string, target: ClusterTarget, m: RegExpExecArray) => string[]][] = [
  [new RegExp(`^CREATE\\s+TABLE\\s+(IF\\s+NOT\\s+EXISTS\\s+)?${IDENT}\\s*\\(`, 'i'), createTable],
  [
    new RegExp(`^CREATE\\s+MATERIALIZED\\s+VIEW\\s+(IF\\s+NOT\\s+EXISTS\\s+)?${IDENT}\\s+TO\\s+${IDENT}\\s+AS\\s+([\\s\\S]+)$`, 'i'),
    createMaterializedView,
  ],
  [new RegExp(`^ALTER\\s+TABLE\\s+${IDENT}\\s+([\\s\\S]+)$`, 'i'), (_sql, target, m) => alterTable(target, m)],
  [new RegExp(`^DROP\\s+(TABLE|VIEW)\\s+(IF\\s+EXISTS\\s+)?${IDENT}\\s*$`, 'i'), (_sql, target, m) => dropTable(target, m)],
  // A backfill runs once, from one node, through the Distributed tables: it reads every shard and
  // the sharding key puts each derived row where the view would have.
  [new RegExp(`^INSERT\\s+INTO\\s+${IDENT}\\s+SELECT\\b`, 'i'), (sql) => [sql]],
]

/**
 * The cluster form of one single-node schema statement: one statement, or two for a sharded table
 * (the local table and its Distributed table). A statement without a cluster form is refused, so a
 * new kind of migration is noticed in the tests instead of half-applied on a cluster.
 */
export function clusterStatements(statement: string, target: ClusterTarget): string[] {
  const sql = statement.trim().replace(/;$/, '')
  for (const [pattern, rewrite] of FORMS) {
    const m = pattern.exec(sql)
    if (m) return rewrite(sql, target, m)
  }
  throw new ClusterDdlError(`cluster mode has no form for this statement: ${firstLine(sql)}`)
}

/**
 * Which ClickHouse clients speak to a cluster: the engine registers its HTTP client, and migrate()
 * reads it, so callers keep passing a client.
 */
const targets = new WeakMap<object, ClusterTarget>()

export function registerCluster(client: object, target: ClusterTarget): void {
  targets.set(client, target)
}

export const clusterOf = (client: object): ClusterTarget | undefined => targets.get(client)

/**
 * Settings every query sends in cluster mode.
 *
 * `distributed_product_mode = 'global'`: a subquery over a Distributed table inside a distributed
 * query runs once over the whole cluster and its result is shipped to the shards. `local` (each
 * shard answers the subquery from its own rows) would be right for the session filters
 * (`id IN (SELECT session_id FROM events …)`: a session's events share its shard) but wrong for
 * subqueries that are not about one session: a filtered /pages keeps the timeline rows whose ids
 * match in events (the two tables place a session's rows by different keys), and the export's
 * profileId filter collects the profile's devices (whose events lie on many shards).
 *
 * `distributed_foreground_insert = 1`: an insert into a Distributed table returns once the rows
 * are on their shards, so a repeated import sees what the previous one wrote.
 */
export const CLUSTER_QUERY_SETTINGS = {
  distributed_product_mode: 'global',
  distributed_foreground_insert: 1,
} as const
