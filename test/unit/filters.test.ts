/**
 * Filters compiled to SQL, without an engine: which rows a name reaches (the session's own value
 * or its events'), that every value travels as a parameter, and the 400 details of bad ones.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DIMENSIONS } from '../../src/query/dimensions.ts'
import type { InvalidInput } from '../../src/query/errors.ts'
import { compileFilters, OPERATORS, type Filter, type FilterScope } from '../../src/query/filters.ts'
import { SqlParams } from '../../src/query/sql-params.ts'

const CTX = { project: '{project:String}', from: '{from:DateTime64(3)}', to: '{to:DateTime64(3)}' }

function compile(filters: Filter[], scope: FilterScope = 'events') {
  const params = new SqlParams()
  const sql = compileFilters(filters, scope, params, CTX)
  return { sql, params: params.values }
}

function failure(filters: Filter[], scope: FilterScope = 'events'): InvalidInput {
  try {
    compile(filters, scope)
  } catch (err) {
    return err as InvalidInput
  }
  throw new Error('expected the filters to be refused')
}

/** The placeholders the SQL names, by name. */
const placeholders = (sql: string) => [...sql.matchAll(/\{(v\d+):[^}]+\}/g)].map((m) => m[1]!)

describe('compileFilters', () => {
  it('no filters, no SQL; an empty value list is no filter (OpenPanel clients rely on it)', () => {
    expect(compile([]).sql).toBe('')
    expect(compile([{ name: 'country', operator: 'is', value: [] }]).sql).toBe('')
  })

  it('is: the column IN an array parameter holding the values', () => {
    const { sql, params } = compile([{ name: 'country', operator: 'is', value: ['SE', 'DE'] }])
    expect(sql).toMatch(/^ AND \(country IN \{v0:Array\(String\)\}\)$/)
    expect(params).toEqual({ v0: ['SE', 'DE'] })
  })

  it("OpenPanel's camelCase aliases name the same column", () => {
    expect(compile([{ name: 'referrerName', operator: 'is', value: ['Google'] }]).sql).toContain('referrer_name IN')
  })

  it('properties.<key> and utm_* read the properties map by a bound key', () => {
    const { sql, params } = compile([
      { name: 'properties.plan', operator: 'is', value: ['pro'] },
      { name: 'utm_source', operator: 'is', value: ['news'] },
    ])
    expect(sql).toContain('properties[{v0:String}]')
    expect(sql).toContain('properties[{v2:String}]')
    expect(params.v0).toBe('plan')
    expect(params.v2).toBe('__query.utm_source')
  })

  it('several filters AND; several values OR, isNot and doesNotContain negate', () => {
    const { sql } = compile([
      { name: 'path', operator: 'startsWith', value: ['/a', '/b'] },
      { name: 'country', operator: 'isNot', value: ['SE'] },
      { name: 'path', operator: 'doesNotContain', value: ['x'] },
    ])
    expect(sql).toBe(
      ' AND ((startsWith(path, {v0:String}) OR startsWith(path, {v1:String})))' +
        ' AND (country NOT IN {v2:Array(String)})' +
        ' AND (NOT multiSearchAny(path, {v3:Array(String)}))',
    )
  })

  it('contains "" matches everything and doesNotContain "" nothing', () => {
    expect(compile([{ name: 'path', operator: 'contains', value: [''] }]).sql).toBe(' AND (1)')
    expect(compile([{ name: 'path', operator: 'doesNotContain', value: [''] }]).sql).toBe(' AND (0)')
  })

  it('isNull: the empty string of a string column, NULL of a nullable one, nothing of a number', () => {
    expect(compile([{ name: 'city', operator: 'isNull', value: [] }]).sql).toBe(" AND (city = '')")
    expect(compile([{ name: 'latitude', operator: 'isNull', value: [] }]).sql).toBe(' AND (latitude IS NULL)')
    expect(compile([{ name: 'duration', operator: 'isNull', value: [] }]).sql).toBe(' AND (0)')
    expect(compile([{ name: 'duration', operator: 'isNotNull', value: [] }]).sql).toBe(' AND (1)')
  })

  it('numbers compare as numbers; Float32 columns with Float32 values', () => {
    expect(compile([{ name: 'duration', operator: 'is', value: ['5', 7] }])).toEqual({
      sql: ' AND (duration IN {v0:Array(Float64)})',
      params: { v0: [5, 7] },
    })
    expect(compile([{ name: 'longitude', operator: 'is', value: [12.5] }]).sql).toContain('Array(Float32)')
    const { sql } = compile([{ name: 'properties.n', operator: 'gt', value: ['3'] }])
    expect(sql).toContain('toFloat64OrNull(properties[{v0:String}]) > {v1:Float64}')
  })

  it('date-times compare as instants, in UTC', () => {
    const { params } = compile([{ name: 'created_at', operator: 'gte', value: ['2026-04-01T10:00:00+02:00'] }])
    expect(params.v0).toBe('2026-04-01 08:00:00.000')
  })

  it('bad values and names are all reported, each at its path', () => {
    const err = failure([
      { name: 'duration', operator: 'is', value: ['abc'] },
      { name: 'nope', operator: 'is', value: ['x'] },
      { name: 'created_at', operator: 'lt', value: ['soon'] },
      { name: 'path', operator: 'gt', value: ['x'] },
    ])
    expect(err.code).toBe('invalid_parameters')
    expect(err.details.map((d) => d.path)).toEqual(['filters.0.value', 'filters.1.name', 'filters.2.value', 'filters.3.value'])
  })

  it('sessions scope: a session attribute filters the session row, an event attribute keeps sessions with a matching event', () => {
    const { sql } = compile(
      [
        { name: 'country', operator: 'is', value: ['SE'] },
        { name: 'path', operator: 'is', value: ['/a'] },
      ],
      'sessions',
    )
    expect(sql).toContain(' AND (country IN ')
    expect(sql).toContain('id IN (SELECT session_id FROM events WHERE project_id = {project:String} AND created_at >= {from:DateTime64(3)} AND (path IN')
  })

  it('pageViews scope: a session attribute keeps the views of matching sessions', () => {
    const { sql } = compile([{ name: 'browser', operator: 'is', value: ['Chrome'] }], 'pageViews')
    expect(sql).toContain('session_id IN (SELECT id FROM sessions FINAL WHERE project_id = {project:String}')
    expect(sql).toContain('(browser IN ')
  })

  it('every filterable dimension is a session attribute in the sessions scope; entry and exit pages are no filter names', () => {
    for (const d of DIMENSIONS) {
      const filters = [{ name: d.name, operator: 'is' as const, value: ['x'] }]
      if (d.filterable) expect(compile(filters, 'sessions').sql, d.name).toMatch(new RegExp(`^ AND \\(${d.column} IN `))
      else expect(failure(filters, 'sessions').details[0]!.path, d.name).toBe('filters.0.name')
    }
  })

  it('no value ever reaches the SQL text, and every placeholder in it has a value (any operator, any values)', () => {
    const value = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.double({ noNaN: true }), fc.boolean())
    const filter = fc.record({
      name: fc.constantFrom('path', 'country', 'duration', 'latitude', 'created_at', 'properties.k', 'utm_term', 'referrerType'),
      operator: fc.constantFrom(...OPERATORS),
      value: fc.array(value, { maxLength: 3 }),
    })
    fc.assert(
      fc.property(fc.array(filter, { maxLength: 4 }), fc.constantFrom<FilterScope>('sessions', 'pageViews', 'events'), (filters, scope) => {
        let out
        try {
          out = compile(filters, scope)
        } catch (err) {
          expect((err as InvalidInput).code).toBe('invalid_parameters')
          return
        }
        for (const name of placeholders(out.sql)) expect(out.params).toHaveProperty(name)
        for (const f of filters) for (const v of f.value) if (String(v).length > 3 && /[^\w.]/.test(String(v))) expect(out.sql).not.toContain(String(v))
      }),
      { seed: 42, numRuns: 300 },
    )
  })
})

describe('profile.* and has_profile', () => {
  it('profile.<column> and profile.properties.<key> compare the stored profile, or empty fields without one', () => {
    const { sql, params } = compile([{ name: 'profile.properties.tier', operator: 'is', value: ['gold'] }])
    expect(sql).toContain('profile_id IN (SELECT id FROM profiles FINAL WHERE project_id = {project:String} AND (properties[{v0:String}] IN {v1:Array(String)}))')
    expect(sql).toContain('profile_id NOT IN (SELECT id FROM profiles FINAL WHERE project_id = {project:String})')
    expect(params).toEqual({ v0: 'tier', v1: ['gold'] })
    expect(compile([{ name: 'profile.firstName', operator: 'contains', value: ['Al'] }]).sql).toContain('multiSearchAny(first_name, {v0:Array(String)})')
    expect(compile([{ name: 'profile.isExternal', operator: 'is', value: [true] }]).sql).toContain('toString(is_external) IN')
  })

  it('on sessions they keep the sessions with an event of a matching profile', () => {
    expect(compile([{ name: 'profile.email', operator: 'isNull', value: [] }], 'sessions').sql).toMatch(/^ AND id IN \(SELECT session_id FROM events WHERE .*\(profile_id IN \(SELECT id FROM profiles/)
    expect(compile([{ name: 'has_profile', operator: 'is', value: ['true'] }], 'sessions').sql).toContain('(profile_id != device_id))')
  })

  it('has_profile: true, false, both, negated; anything else is a 400', () => {
    expect(compile([{ name: 'has_profile', operator: 'is', value: ['true'] }]).sql).toBe(' AND (profile_id != device_id)')
    expect(compile([{ name: 'has_profile', operator: 'is', value: [false] }]).sql).toBe(' AND (profile_id = device_id)')
    expect(compile([{ name: 'has_profile', operator: 'isNot', value: ['true'] }]).sql).toBe(' AND (NOT (profile_id != device_id))')
    expect(compile([{ name: 'has_profile', operator: 'is', value: ['true', 'false'] }]).sql).toBe(' AND (1)')
    expect(failure([{ name: 'has_profile', operator: 'gt', value: ['1'] }]).details).toEqual([{ path: 'filters.0.operator', message: 'has_profile takes is or isNot' }])
    expect(failure([{ name: 'has_profile', operator: 'is', value: ['yes'] }]).details).toEqual([{ path: 'filters.0.value', message: 'has_profile takes true or false' }])
    expect(failure([{ name: 'profile.shoe_size', operator: 'is', value: ['9'] }]).details[0]!.path).toBe('filters.0.name')
  })
})
