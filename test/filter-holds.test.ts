/**
 * filterHolds decides, without the engine, that a filter holds for every event with a given name;
 * /metrics then drops it from the test on its revenue events. Each answer is checked against the
 * engine evaluating the filter's own compiled predicate on a row with that name: a `true` the engine
 * does not share would change an answer, so every `true` must be the engine's. A `false` only keeps a
 * test, but for the operators filterHolds decides it must be the engine's too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { filterHolds, revenueEventFilters } from '../src/query/filter-holds.ts'
import { compileFilters, type Filter } from '../src/query/filters.ts'
import { SqlParams } from '../src/query/sql-params.ts'
import { openTestRuntime, type TestRuntime } from './helpers/runtime.ts'

let rt: TestRuntime
beforeAll(async () => {
  rt = await openTestRuntime()
})
afterAll(async () => rt?.dispose())

/** Whether the engine keeps an event named `name` under the filter, by the predicate requests use. */
async function engineKeeps(f: Filter, name: string): Promise<boolean> {
  const params = new SqlParams()
  const condition = compileFilters([f], 'events', params, { project: "''", from: "toDateTime64(0, 3, 'UTC')", to: "toDateTime64(0, 3, 'UTC')" })
  params.values.event_name = name
  const sql = `SELECT count() AS n FROM (SELECT {event_name:String} AS name) WHERE 1 ${condition}`
  const [row] = await rt.runner.rows<{ n: number }>({ name: 'holds', sql, params: params.values }, { timeoutS: 30 })
  return row!.n === 1
}

const VALUES = [['revenue'], ['click', 'revenue'], ['click'], ['Revenue'], ['rev'], ['nue', 'x'], ['venu'], [''], ['revenue '], ['ü'], [null]]
const DECIDED = ['is', 'isNot', 'contains', 'doesNotContain', 'startsWith', 'endsWith'] as const

describe('filterHolds', () => {
  it('agrees with the engine for every decided operator and value list, on several names', async () => {
    let holding = 0
    for (const name of ['revenue', 'click', 'ü-x']) {
      for (const operator of DECIDED) {
        for (const value of VALUES) {
          const f: Filter = { name: 'name', operator, value }
          const holds = filterHolds(f, 'name', name)
          expect(holds, `${name} ${operator} ${JSON.stringify(value)}`).toBe(await engineKeeps(f, name))
          if (holds) holding++
        }
      }
      for (const operator of ['isNull', 'isNotNull'] as const) {
        const f: Filter = { name: 'name', operator, value: [] }
        if (filterHolds(f, 'name', name)) holding++
        expect(filterHolds(f, 'name', name), `${name} ${operator}`).toBe(await engineKeeps(f, name))
      }
    }
    // Both answers occur: the comparison is not between two constants.
    expect(holding).toBeGreaterThan(10)
    expect(holding).toBeLessThan(3 * (DECIDED.length * VALUES.length + 2) - 10)
  })

  it('never holds where it cannot decide: a regex, a number, another column, a session attribute', () => {
    expect(filterHolds({ name: 'name', operator: 'regex', value: ['^rev'] }, 'name', 'revenue')).toBe(false)
    expect(filterHolds({ name: 'name', operator: 'gt', value: [1] }, 'name', 'revenue')).toBe(false)
    expect(filterHolds({ name: 'path', operator: 'is', value: ['revenue'] }, 'name', 'revenue')).toBe(false)
    expect(filterHolds({ name: 'country', operator: 'is', value: ['revenue'] }, 'name', 'revenue')).toBe(false)
    expect(filterHolds({ name: 'properties.name', operator: 'is', value: ['revenue'] }, 'name', 'revenue')).toBe(false)
  })

  it("leaves out of the revenue events' filters exactly those the name `revenue` meets", () => {
    const meets: Filter = { name: 'name', operator: 'is', value: ['click', 'revenue'] }
    const other: Filter = { name: 'name', operator: 'is', value: ['click'] }
    const country: Filter = { name: 'country', operator: 'is', value: ['SE'] }
    expect(revenueEventFilters([meets, other, country])).toEqual([other, country])
  })
})
