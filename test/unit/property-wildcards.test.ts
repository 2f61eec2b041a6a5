import { describe, expect, it } from 'vitest'
import { wildcardPattern, wildcardProperty } from '../../src/query/property-wildcards.ts'
import { SqlParams } from '../../src/query/sql-params.ts'

describe("OpenPanel's wildcard property keys", () => {
  it('make each * segment (or [*]) any text and keep the rest literal, LIKE wildcards included', () => {
    expect(wildcardPattern('items.*.name')).toBe('items.%.name')
    expect(wildcardPattern('items[*].name')).toBe('items.%.name')
    expect(wildcardPattern('*.price')).toBe('%.price')
    expect(wildcardPattern('a.*')).toBe('a.%')
    expect(wildcardPattern('100%_off.*.x\\y')).toBe('100\\%\\_off.%.x\\\\y')
  })

  it('leave keys without a whole * segment alone', () => {
    for (const key of ['plan', 'a*b', 'a.*b', '*', 'items[0].name']) expect(wildcardPattern(key) === undefined, key).toBe(key !== '*')
  })

  it('bind the pattern as a parameter and wrap the predicate in arrayExists', () => {
    const params = new SqlParams()
    const wrap = wildcardProperty('properties.items.*.name', params)!
    expect(wrap("property_value = {v9:String}")).toBe(
      'arrayExists(property_value -> property_value = {v9:String}, mapValues(mapExtractKeyLike(properties, {v0:String})))',
    )
    expect(params.values).toEqual({ v0: 'items.%.name' })
    expect(wildcardProperty('properties.plan', params)).toBeUndefined()
    expect(wildcardProperty('path', params)).toBeUndefined()
  })
})
