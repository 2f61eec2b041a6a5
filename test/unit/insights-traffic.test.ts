/**
 * The statements of pages/top and pages/performance, built without an engine around both /pages
 * statements: every placeholder bound, the search a parameter (never SQL text), the sort from the
 * allow-list; OpenPanel's traffic groups drawn from the dimension registry; the SEO heuristics at
 * their thresholds; and the performance body assembled from rows.
 */
import { DateTime } from 'luxon'
import { describe, expect, it } from 'vitest'
import { assertReadStatement, type Statement } from '../../src/clickhouse/run.ts'
import { findDimension } from '../../src/query/dimensions.ts'
import { pagesStatement } from '../../src/query/insights.ts'
import {
  ALL_ROWS,
  assemblePerformance,
  ENTRY_EXIT_MODES,
  LIST_ROWS,
  PAGE_SORTS,
  pagesPerformanceStatement,
  pagesTopStatement,
  seoSignals,
  TRAFFIC_GROUPS,
} from '../../src/query/insights-traffic.ts'
import { sealedPagesStatement } from '../../src/query/sealed-pages.ts'

const RANGE = {
  start: DateTime.fromISO('2026-03-01T00:00:00', { zone: 'Europe/Stockholm' }),
  end: DateTime.fromISO('2026-04-01T00:00:00', { zone: 'Europe/Stockholm' }),
  timezone: 'Europe/Stockholm',
}
const REQ = { projectId: 'p', range: RANGE, filters: [], limit: ALL_ROWS, offset: 0 }
const BUILD = {
  version: 3,
  closedAt: DateTime.fromISO('2026-03-20T10:00:00Z'),
  heldFrom: DateTime.fromISO('2026-03-20T08:00:00Z'),
  longestMs: 3_600_000,
  insertsSince: DateTime.fromISO('2026-03-20T10:05:00Z'),
  inserts: 0,
  pageHeld: ['12345'],
  pageHeldFrom: DateTime.fromISO('2026-03-20T09:00:00Z'),
  recentSessions: 0,
}
const RANKINGS: Statement[] = [pagesStatement(REQ), sealedPagesStatement(REQ, BUILD)]
const NASTY = "x') OR 1=1; DROP TABLE events; --"

const code = (sql: string) =>
  sql
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')

function wellFormed(stmt: Statement) {
  expect(stmt.sql, stmt.name).not.toContain('{{')
  for (const [, name] of code(stmt.sql).matchAll(/\{(\w+):[^}]+\}/g)) expect(stmt.params, `${stmt.name}: ${name}`).toHaveProperty(name!)
  expect(() => assertReadStatement(stmt.sql)).not.toThrow()
}

describe('pages/top and pages/performance statements', () => {
  it('wrap either /pages ranking, read whole, keeping its settings', () => {
    for (const ranking of RANKINGS) {
      expect(ranking.params.limit).toBe(ALL_ROWS)
      const top = pagesTopStatement(ranking, [])
      wellFormed(top)
      expect(top.name).toBe(`insights_pages_top:${ranking.name}`)
      expect(top.params.page_limit).toBe(LIST_ROWS)
      expect(top.settings).toEqual(ranking.settings)
      expect(top.sql).toContain(code(ranking.sql).trim().split('\n')[0])
    }
  })

  it('pages/top binds its filters beside those of the ranking, without a name of theirs clashing', () => {
    const filters = [
      { name: 'country', operator: 'is' as const, value: [NASTY] },
      { name: 'path', operator: 'contains' as const, value: ['/pricing'] },
    ]
    const ranking = pagesStatement({ ...REQ, filters })
    const top = pagesTopStatement(ranking, filters)
    wellFormed(top)
    expect(top.sql).not.toContain(NASTY)
    // The ranking's bindings stay, and the revenue events' filter binds the value once more.
    const bound = (params: Record<string, unknown>) => Object.values(params).filter((v) => JSON.stringify(v).includes(NASTY)).length
    expect(bound(top.params)).toBe(bound(ranking.params) + 1)
    for (const [name, value] of Object.entries(ranking.params)) expect(top.params[name]).toEqual(value)
  })

  it('bind the search as a parameter and take the sort from the allow-list', () => {
    for (const ranking of RANKINGS) {
      for (const sortBy of PAGE_SORTS) {
        const stmt = pagesPerformanceStatement(ranking, { search: NASTY, sortBy, sortOrder: 'asc', limit: 7 })
        wellFormed(stmt)
        expect(stmt.sql).not.toContain(NASTY)
        expect(stmt.params.search).toBe(NASTY)
        expect(stmt.params.page_limit).toBe(7)
        expect(stmt.sql).toContain(`ORDER BY p.${sortBy} ASC, p.sessions DESC`)
      }
      const plain = pagesPerformanceStatement(ranking, { search: '', sortBy: 'sessions', sortOrder: 'desc', limit: 50 })
      wellFormed(plain)
      expect(plain.params).not.toHaveProperty('search')
      expect(plain.sql).toContain('ORDER BY p.sessions DESC')
    }
    const forged = { search: undefined, sortBy: 'sessions; DROP TABLE events' as 'sessions', sortOrder: 'desc' as const, limit: 1 }
    expect(() => pagesPerformanceStatement(RANKINGS[0]!, forged)).toThrow(/no page sort/)
  })
})

describe('the traffic groups and entry/exit modes', () => {
  it('name dimensions of the registry, the default first, as OpenPanel lists them', () => {
    expect(TRAFFIC_GROUPS).toEqual({
      referrers: ['referrer_name', 'referrer_type', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign'],
      geo: ['country', 'region', 'city'],
      devices: ['device', 'browser', 'os'],
    })
    for (const name of [...Object.values(TRAFFIC_GROUPS).flat(), ...Object.values(ENTRY_EXIT_MODES)]) expect(findDimension(name), name).toBeDefined()
    // OpenPanel's traffic rows carry a prefix for region and city only.
    expect(Object.values(TRAFFIC_GROUPS).flat().filter((name) => findDimension(name)!.prefix)).toEqual(['region', 'city'])
  })
})

describe('SEO signals and the performance body', () => {
  it("OpenPanel's thresholds, strict on both sides", () => {
    expect(seoSignals(70, 1)).toEqual({ high_bounce: false, low_engagement: false, good_landing_page: false })
    expect(seoSignals(70.01, 0.99)).toEqual({ high_bounce: true, low_engagement: true, good_landing_page: false })
    expect(seoSignals(39.99, 2.01)).toEqual({ high_bounce: false, low_engagement: false, good_landing_page: true })
    expect(seoSignals(40, 3).good_landing_page).toBe(false)
    expect(seoSignals(10, 2).good_landing_page).toBe(false)
  })

  it('counts the matching pages and the rows shown; none matching is an empty body', () => {
    const row = { origin: 'https://a', path: '/x', title: 'X', sessions: 3, pageviews: 4, bounce_rate: 50, minutes: 0.5, total_pages: 9 }
    expect(assemblePerformance([row])).toEqual({
      total_pages: 9,
      shown: 1,
      pages: [{ origin: 'https://a', path: '/x', title: 'X', sessions: 3, pageviews: 4, bounce_rate: 50, avg_duration: 0.5, seo_signals: { high_bounce: false, low_engagement: true, good_landing_page: false } }],
    })
    expect(assemblePerformance([])).toEqual({ total_pages: 0, shown: 0, pages: [] })
  })
})
