import { readdirSync, readFileSync } from 'node:fs'
import type { ClickHouseClient } from '@clickhouse/client'
import { clusterOf, clusterStatements, type ClusterTarget } from './cluster.ts'
import { withMigrationLock, type MigrationLockOptions } from './migration-lock.ts'

const SCHEMA_DIR = new URL('../../sql/schema/', import.meta.url)

export interface Migration {
  version: string
  statements: string[]
}

/** Statements of one schema file: split at semicolons that end a line, comments dropped. */
export function splitStatements(text: string): string[] {
  return text
    .split(/;\s*$/m)
    .map((part) =>
      part
        .split('\n')
        .filter((line) => !line.trimStart().startsWith('--'))
        .join('\n')
        .trim(),
    )
    .filter((stmt) => stmt.length > 0)
}

const VIEW = /^CREATE MATERIALIZED VIEW (?:IF NOT EXISTS )?(\w+) TO (\w+) AS\s+(SELECT[\s\S]*)$/i
const BACKFILL = /^BACKFILL (\w+)$/i

/**
 * `BACKFILL <view>` in a schema file stands for `INSERT INTO <its target> <its SELECT>`: the rows
 * the view would have derived from what was stored before it, by the view's own query, so the
 * definition is written once. The view must be created earlier in the same file.
 */
export function expandBackfills(statements: readonly string[], file = 'the schema file'): string[] {
  const views = new Map<string, { target: string; select: string }>()
  return statements.map((statement) => {
    const view = VIEW.exec(statement)
    if (view) views.set(view[1]!, { target: view[2]!, select: view[3]! })
    const backfill = BACKFILL.exec(statement)
    if (!backfill) return statement
    const found = views.get(backfill[1]!)
    if (!found) throw new Error(`${file}: BACKFILL ${backfill[1]} names no materialized view created before it`)
    return `INSERT INTO ${found.target}\n${found.select}`
  })
}

export function loadMigrations(dir: URL = SCHEMA_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d+_.+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: file.replace(/\.sql$/, ''),
      statements: expandBackfills(splitStatements(readFileSync(new URL(file, dir), 'utf8')), file),
    }))
}

export const SCHEMA_MIGRATIONS_DDL = `CREATE TABLE IF NOT EXISTS schema_migrations (
      version String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
    ) ENGINE = MergeTree ORDER BY version`

export interface MigrateOptions {
  /** Cluster mode: every statement in its cluster form (see cluster.ts). */
  cluster?: ClusterTarget
  lock?: MigrationLockOptions
}

/** The statements to run for one schema statement: itself, or its cluster form. */
export const statementsFor = (statement: string, cluster?: ClusterTarget): string[] =>
  cluster ? clusterStatements(statement, cluster) : [statement]

/**
 * Applies the schema files not yet recorded in schema_migrations, in order; returns their versions.
 * A client the engine opened for a cluster (CLICKHOUSE_CLUSTER) migrates the cluster. Instances
 * starting together take turns (migration-lock.ts); the later ones find nothing left to apply.
 */
export async function migrate(client: ClickHouseClient, options: MigrateOptions = { cluster: clusterOf(client) }): Promise<string[]> {
  return withMigrationLock(client, () => migrateLocked(client, options.cluster), { ...options.lock, cluster: options.cluster })
}

async function migrateLocked(client: ClickHouseClient, cluster: ClusterTarget | undefined): Promise<string[]> {
  for (const query of statementsFor(SCHEMA_MIGRATIONS_DDL, cluster)) await client.command({ query })
  const result = await client.query({ query: 'SELECT version FROM schema_migrations', format: 'JSONEachRow' })
  const applied = new Set((await result.json<{ version: string }>()).map((r) => r.version))
  const done: string[] = []
  for (const migration of loadMigrations()) {
    if (applied.has(migration.version)) continue
    for (const statement of migration.statements) {
      for (const query of statementsFor(statement, cluster)) await client.command({ query })
    }
    await client.insert({ table: 'schema_migrations', values: [{ version: migration.version }], format: 'JSONEachRow' })
    done.push(migration.version)
  }
  return done
}
