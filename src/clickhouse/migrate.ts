import { readdirSync, readFileSync } from 'node:fs'
import type { ClickHouseClient } from '@clickhouse/client'

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

export function loadMigrations(dir: URL = SCHEMA_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d+_.+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: file.replace(/\.sql$/, ''),
      statements: splitStatements(readFileSync(new URL(file, dir), 'utf8')),
    }))
}

/** Applies the schema files not yet recorded in schema_migrations, in order; returns their versions. */
export async function migrate(client: ClickHouseClient): Promise<string[]> {
  await client.command({
    query: `CREATE TABLE IF NOT EXISTS schema_migrations (
      version String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
    ) ENGINE = MergeTree ORDER BY version`,
  })
  const result = await client.query({ query: 'SELECT version FROM schema_migrations', format: 'JSONEachRow' })
  const applied = new Set((await result.json<{ version: string }>()).map((r) => r.version))
  const done: string[] = []
  for (const migration of loadMigrations()) {
    if (applied.has(migration.version)) continue
    for (const statement of migration.statements) await client.command({ query: statement })
    await client.insert({ table: 'schema_migrations', values: [{ version: migration.version }], format: 'JSONEachRow' })
    done.push(migration.version)
  }
  return done
}
