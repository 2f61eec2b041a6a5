import { describe, expect, it } from 'vitest'
import { underOneMap, type ExplainedStatement } from '../../src/http/explain.ts'

// Each statement, replayed with the one map, must bind every placeholder to the value it was sent
// with: the placeholders of a statement, in order, resolved against its own parameters and then
// against the map.
const placeholders = (sql: string) => [...sql.matchAll(/\{(\w+):[^{}]+\}/g)].map((m) => m[1]!)
const bound = (sql: string, params: Record<string, unknown>) => placeholders(sql).map((name) => (name in params ? params[name] : `missing ${name}`))

function expectReplayable(statements: ExplainedStatement[]) {
  const merged = underOneMap(statements)
  expect(merged.sql).toHaveLength(statements.length)
  statements.forEach((stmt, i) => {
    expect(bound(merged.sql[i]!, merged.params)).toEqual(bound(stmt.sql, stmt.params))
    expect(placeholders(merged.sql[i]!)).toHaveLength(placeholders(stmt.sql).length)
  })
  return merged
}

describe('explain=sql: every statement under one map of parameters', () => {
  it('leaves statements alone when no name is bound to two values', () => {
    const statements = [
      { sql: 'SELECT {project:String}, {from:DateTime64(3)}', params: { project: 'p', from: '2026-01-01 00:00:00.000' } },
      { sql: 'SELECT {project:String}, {closed:Array(String)}', params: { project: 'p', closed: ['a', 'b'] } },
    ]
    const merged = expectReplayable(statements)
    expect(merged.sql).toEqual(statements.map((s) => s.sql))
    expect(merged.params).toEqual({ project: 'p', from: '2026-01-01 00:00:00.000', closed: ['a', 'b'] })
  })

  it('renames a name a later statement binds to another value, in that statement only', () => {
    const statements = [
      { sql: 'SELECT {closed:Array(String)} AS a, {closed_at:String}', params: { closed: ['x'], closed_at: 'c' } },
      { sql: 'SELECT {closed:DateTime64(3)} AS b, {closed:DateTime64(3)} AS again, {closed_2:UInt8}', params: { closed: '2026-02-01 00:00:00.000', closed_2: 7 } },
      { sql: 'SELECT {closed:Array(String)} AS c', params: { closed: ['x'] } },
      { sql: 'SELECT {closed:Array(String)} AS d', params: { closed: ['y'] } },
    ]
    const merged = expectReplayable(statements)
    expect(merged.sql[0]).toBe(statements[0]!.sql)
    expect(merged.sql[2]).toBe(statements[2]!.sql)
    expect(merged.sql[1]).not.toContain('{closed:')
    expect(new Set(Object.keys(merged.params)).size).toBe(Object.keys(merged.params).length)
  })
})
