/**
 * The schema files as the migrator reads them, without an engine: statements split at line-ending
 * semicolons, comments dropped, and `BACKFILL <view>` replaced by the view's own SELECT into its target.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { expandBackfills, loadMigrations, splitStatements } from '../../src/clickhouse/migrate.ts'

const SCHEMA = new URL('../../sql/schema/', import.meta.url)

describe('expandBackfills', () => {
  const view = "CREATE MATERIALIZED VIEW IF NOT EXISTS v_mv TO t AS\nSELECT a, b\nFROM src\nGROUP BY a"

  it('BACKFILL names a view created before it: an INSERT into its target of its SELECT', () => {
    expect(expandBackfills(['CREATE TABLE t (a UInt8)', view, 'BACKFILL v_mv'])).toEqual([
      'CREATE TABLE t (a UInt8)',
      view,
      'INSERT INTO t\nSELECT a, b\nFROM src\nGROUP BY a',
    ])
  })

  it('a view created after it, or not at all, is an error naming the file', () => {
    expect(() => expandBackfills(['BACKFILL v_mv', view], '099_x.sql')).toThrow(/099_x\.sql: BACKFILL v_mv/)
    expect(() => expandBackfills([view, 'BACKFILL other_mv'])).toThrow(/other_mv/)
  })

  it('leaves every other statement as it is', () => {
    const statements = ['SELECT 1', 'INSERT INTO t SELECT 1', 'DROP VIEW IF EXISTS v_mv']
    expect(expandBackfills(statements)).toEqual(statements)
  })
})

describe('the schema files', () => {
  const files = readdirSync(SCHEMA).filter((f) => /^\d+_.+\.sql$/.test(f)).sort()

  it('each is a migration, in order, none empty', () => {
    expect(loadMigrations().map((m) => `${m.version}.sql`)).toEqual(files)
    for (const m of loadMigrations()) expect(m.statements.length, m.version).toBeGreaterThan(0)
  })

  it('no statement keeps a comment line or a BACKFILL', () => {
    for (const m of loadMigrations()) {
      for (const s of m.statements) {
        expect(s.split('\n').some((line) => line.trimStart().startsWith('--')), m.version).toBe(false)
        expect(s.startsWith('BACKFILL'), m.version).toBe(false)
      }
    }
  })

  it('a view written with its backfill fills its target with exactly its own SELECT', () => {
    let backfills = 0
    for (const file of files) {
      const raw = splitStatements(readFileSync(new URL(file, SCHEMA), 'utf8'))
      raw.forEach((statement, i) => {
        const name = /^BACKFILL (\w+)$/.exec(statement)?.[1]
        if (!name) return
        backfills++
        const view = raw.find((s) => new RegExp(`^CREATE MATERIALIZED VIEW (IF NOT EXISTS )?${name} TO `).test(s))!
        const [, target, select] = /TO (\w+) AS\s+(SELECT[\s\S]*)$/.exec(view)!
        expect(loadMigrations().find((m) => `${m.version}.sql` === file)!.statements[i]).toBe(`INSERT INTO ${target}\n${select}`)
      })
    }
    // 008 (sessions) and 009 (the session timeline) backfill from their views.
    expect(backfills).toBeGreaterThanOrEqual(2)
  })
})

describe('splitStatements', () => {
  it('splits at semicolons that end a line, not at ones inside a line or a comment', () => {
    const text = "-- a comment; with a semicolon\nCREATE TABLE a (x String DEFAULT ';');\n\nSELECT 1;\n-- trailing\n"
    expect(splitStatements(text)).toEqual(["CREATE TABLE a (x String DEFAULT ';')", 'SELECT 1'])
  })
})
