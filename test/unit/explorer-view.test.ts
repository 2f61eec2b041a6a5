/** The explorer's view in its URL: what a bookmark restores, and what the API is sent. */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { describeFilter, readView, windowParams, withFilters, withoutFilter, writeView, type View } from '../../src/web/client/view.ts'

const text = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s.trim() === s && s.length > 0)
const filter = fc.record({ name: text, operator: fc.constantFrom('is', 'isNot', 'contains'), value: fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }) })
const view: fc.Arbitrary<View> = fc.record({
  project: fc.option(text, { nil: null }),
  range: fc.constantFrom('30d', '7d', 'today', 'lastMonth'),
  startDate: fc.constant(null),
  endDate: fc.constant(null),
  timezone: fc.option(fc.constantFrom('UTC', 'Europe/Stockholm', 'America/New_York'), { nil: null }),
  filters: fc.array(filter, { maxLength: 3 }),
})

describe('the explorer view in the URL', () => {
  it('round-trips through the address bar', () => {
    fc.assert(fc.property(view, (v) => {
      expect(readView(writeView(v))).toEqual(v)
    }))
  })

  it('round-trips custom dates, which replace the range', () => {
    const v: View = { project: 'demo', range: '30d', startDate: '2026-01-01', endDate: '2026-01-31', timezone: null, filters: [] }
    expect(writeView(v)).toBe('?project=demo&startDate=2026-01-01&endDate=2026-01-31')
    expect(readView(writeView(v))).toEqual(v)
    expect(Object.fromEntries(windowParams(v))).toEqual({ startDate: '2026-01-01', endDate: '2026-01-31' })
  })

  it('reads a hand-written or damaged URL without throwing: 30d by default, bad filters dropped', () => {
    expect(readView('')).toEqual({ project: null, range: '30d', startDate: null, endDate: null, timezone: null, filters: [] })
    expect(readView('?filters=%7Bnot-json').filters).toEqual([])
    expect(readView('?filters=%5B1%2C%7B%22name%22%3A%22country%22%2C%22operator%22%3A%22is%22%2C%22value%22%3A%5B%22SE%22%2C3%5D%7D%5D').filters).toEqual([
      { name: 'country', operator: 'is', value: ['SE', '3'] },
    ])
  })

  it('adds a filter once and removes it by its position', () => {
    const base = readView('?project=demo')
    const country = { name: 'country', operator: 'is', value: ['SE'] }
    const once = withFilters(withFilters(base, [country]), [country])
    expect(once.filters).toEqual([country])
    expect(describeFilter(country)).toBe('country is SE')
    expect(withoutFilter(once, 0).filters).toEqual([])
  })
})
