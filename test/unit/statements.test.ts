/**
 * The statements routes send, built without an engine: every placeholder bound, no user value in
 * the SQL text, the allow-listed expression in place, no template slot left; and what the runner
 * adds to a statement before sending it.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { DateTime } from 'luxon'
import { describe, expect, it } from 'vitest'
import { assertReadStatement, finalSql, readDeadlineMs, type Statement } from '../../src/clickhouse/run.ts'
import { chartPreviousRange, chartSeriesStatement, isBreakdownName, isPropertyName, SEGMENTS } from '../../src/query/charts.ts'
import { DIMENSIONS } from '../../src/query/dimensions.ts'
import { InvalidInput } from '../../src/query/errors.ts'
import { exportEventsCountStatement, exportEventsStatement, resolveExportWindow, resolveIncludes } from '../../src/query/export-events.ts'
import { breakdownStatement, liveStatement, pagesStatement } from '../../src/query/insights.ts'
import { metricsStatement } from '../../src/query/metrics.ts'
import { renderSql } from '../../src/query/sql-templates.ts'
import type { TimeRange } from '../../src/query/time-range.ts'

const RANGE: TimeRange = {
  start: DateTime.fromISO('2026-03-01T00:00:00', { zone: 'Europe/Stockholm' }),
  end: DateTime.fromISO('2026-04-01T00:00:00', { zone: 'Europe/Stockholm' }),
  timezone: 'Europe/Stockholm',
}
const NASTY = "x'); DROP TABLE events; --"

/** Placeholder names of the SQL, comment lines aside. */
const placeholders = (sql: string) => {
  const code = sql
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
  return new Set([...code.matchAll(/\{(\w+):[^}]+\}/g)].map((m) => m[1]!))
}

function wellFormed(stmt: Statement) {
  expect(stmt.sql, stmt.name).not.toContain('{{')
  for (const name of placeholders(stmt.sql)) expect(stmt.params, `${stmt.name}: ${name}`).toHaveProperty(name)
  expect(stmt.sql).not.toContain(NASTY)
  expect(() => assertReadStatement(stmt.sql)).not.toThrow()
}

const FILTERS = [
  { name: 'properties.plan', operator: 'is' as const, value: [NASTY] },
  { name: 'country', operator: 'is' as const, value: [NASTY] },
]
const PAGE = { projectId: NASTY, range: RANGE, filters: FILTERS, limit: 11, offset: 20 }

describe('insights statements', () => {
  it('a breakdown for every dimension groups by its sessions column (and prefix)', () => {
    for (const d of DIMENSIONS) {
      const stmt = breakdownStatement(d, PAGE)
      wellFormed(stmt)
      expect(stmt.sql).toContain(`nullIf(${d.column}, '') AS name`)
      if (d.prefix) expect(stmt.sql).toContain(`nullIf(${d.prefix}, '') AS prefix`)
      expect(stmt.params).toMatchObject({ project: NASTY, limit: 11, offset: 20, from: '2026-02-28 23:00:00.000', to: '2026-03-31 22:00:00.000' })
    }
  })

  it('pages: filters pick the matching views and sessions', () => {
    const stmt = pagesStatement(PAGE)
    wellFormed(stmt)
    expect(stmt.sql).toContain("AND id IN (SELECT id FROM events WHERE project_id = {project:String} AND name = 'screen_view'")
    expect(pagesStatement({ ...PAGE, filters: [] }).sql).not.toContain('SELECT id FROM events')
  })

  it('live: the last five minutes before now', () => {
    const stmt = liveStatement('p', DateTime.fromISO('2026-04-01T10:00:00.250Z', { zone: 'UTC' }))
    wellFormed(stmt)
    expect(stmt.params).toEqual({ project: 'p', now: '2026-04-01 10:00:00.250' })
  })

  it('metrics: the bucket in the request timezone, the previous period from its start, revenue filtered by session', () => {
    const previous = { ...RANGE, start: RANGE.start.minus({ days: 31 }), end: RANGE.start }
    const stmt = metricsStatement({ projectId: 'p', range: RANGE, previous, interval: 'day', filters: FILTERS })
    wellFormed(stmt)
    expect(stmt.sql).toMatch(/toStartOfDay\(created_at, \{v\d+:String\}\)/)
    expect(Object.values(stmt.params)).toContain('Europe/Stockholm')
    expect(stmt.params.earliest).toBe('2026-01-28 23:00:00.000')
    expect(stmt.sql).toContain('SELECT min(created_at) FROM sessions FINAL')
    expect(metricsStatement({ projectId: 'p', range: RANGE, interval: 'week', filters: [] }).sql).not.toContain('SELECT min(created_at)')
  })
})

describe('chart statements', () => {
  const base = { projectId: 'p', range: RANGE, interval: 'day' as const, name: NASTY, filters: FILTERS, breakdowns: [], limit: 50, path: 'series.0' }

  it('every segment builds, counting what it says', () => {
    for (const segment of SEGMENTS) {
      const stmt = chartSeriesStatement({ ...base, segment, property: segment.startsWith('property_') ? 'properties.price' : undefined })
      wellFormed(stmt)
      expect(stmt.name).toBe(`export_charts:${segment}`)
    }
    expect(chartSeriesStatement({ ...base, segment: 'user' }).sql).toContain('uniqExact(profile_id)')
    expect(chartSeriesStatement({ ...base, segment: 'one_event_per_user' }).sql).toContain('LIMIT 1 BY period, profile_id')
  })

  it("'*' is every event: no name condition", () => {
    expect(chartSeriesStatement({ ...base, name: '*', segment: 'event' }).sql).not.toMatch(/name = \{v\d+:String\}/)
  })

  it('breakdowns: columns by name, properties and UTM fields by bound key; a property segment without a property is refused', () => {
    const stmt = chartSeriesStatement({ ...base, segment: 'event', breakdowns: ['referrerName', 'properties.plan', 'utm_source'] })
    wellFormed(stmt)
    expect(stmt.sql).toContain('referrer_name AS l0')
    expect(stmt.sql).toMatch(/properties\[\{v\d+:String\}\] AS l1/)
    expect(Object.values(stmt.params)).toEqual(expect.arrayContaining(['plan', '__query.utm_source']))
    let err: InvalidInput | undefined
    try {
      chartSeriesStatement({ ...base, segment: 'property_sum' })
    } catch (e) {
      err = e as InvalidInput
    }
    expect(err?.details).toEqual([{ path: 'series.0.property', message: 'segment property_sum needs a property' }])
  })

  it('which names may be breakdowns and property measures', () => {
    expect(['country', 'referrerName', 'properties.x', 'utm_term', 'duration'].every(isBreakdownName)).toBe(true)
    expect(['id', 'project_id', 'created_at', 'imported_at', 'properties.', 'nope'].some(isBreakdownName)).toBe(false)
    expect(['duration', 'revenue', 'latitude', 'properties.n'].every(isPropertyName)).toBe(true)
    expect(['country', 'properties.', 'name'].some(isPropertyName)).toBe(false)
  })

  it('the previous period of a 31-day month in days: local midnight to local midnight across DST', () => {
    const previous = chartPreviousRange(RANGE, 'day')
    expect(previous.start.toISO()).toBe('2026-01-29T00:00:00.000+01:00')
    expect(previous.end.toMillis()).toBe(RANGE.start.toMillis())
    expect(chartPreviousRange(RANGE, 'hour').start.toMillis()).toBe(RANGE.start.toMillis() - (RANGE.end.toMillis() - RANGE.start.toMillis()))
  })
})

describe('export statements', () => {
  const window = resolveExportWindow('2026-04-01', '2026-04-01', 'UTC', new Date())
  const fields = resolveIncludes(['profile,meta', 'geo']).fields

  it('includes: names and groups, canonical order, unknown ones each refused', () => {
    expect(resolveIncludes('geo, properties').names).toEqual(['geo', 'properties'])
    expect([...fields]).toEqual(expect.arrayContaining(['profile', 'meta', 'region', 'latitude', 'longitude', 'id']))
    let err: InvalidInput | undefined
    try {
      resolveIncludes('a,b')
    } catch (e) {
      err = e as InvalidInput
    }
    expect(err?.details.map((d) => d.message.slice(0, 19))).toEqual(['unknown include "a"', 'unknown include "b"'])
  })

  it('the window: dates are whole days, no start means all time (from the Unix epoch), as OpenPanel', () => {
    expect([window.from.toISO(), window.to.toISO()]).toEqual(['2026-04-01T00:00:00.000Z', '2026-04-02T00:00:00.000Z'])
    const d = resolveExportWindow(undefined, '2026-04-01T00:00:00Z', 'Europe/Stockholm', new Date())
    // The end is inclusive to the millisecond: the window is half-open one after it.
    expect([d.from.toMillis(), d.to.toMillis()]).toEqual([0, Date.parse('2026-04-01T00:00:00Z') + 1])
  })

  it('includes naming a default field are set apart as ignored; unknown names stay a 400', () => {
    const r = resolveIncludes(['city,properties', 'id', 'city'])
    expect([r.names, r.ignored]).toEqual([['properties'], ['city', 'id']])
    expect(r.fields.has('properties') && r.fields.has('city')).toBe(true)
    expect(() => resolveIncludes('city,nope')).toThrow(InvalidInput)
  })

  it('a page: keyset after the last row, limit and offset bound; a stream: no LIMIT, small blocks', () => {
    const req = { projectId: 'p', window, events: [NASTY], filters: FILTERS, fields, format: 'json' as const }
    const page = exportEventsStatement({ ...req, page: { limit: 51, offset: 0, after: { createdAt: '2026-04-01 10:00:00.000', id: '0190a3c4-1111-7000-8000-000000000001' } } })
    wellFormed(page)
    expect(page.sql).toContain('ORDER BY e.created_at DESC, e.id ASC')
    expect(page.params).toMatchObject({ limit: 51, offset: 0, after_at: '2026-04-01 10:00:00.000' })
    const stream = exportEventsStatement({ ...req, format: 'csv' })
    wellFormed(stream)
    expect(stream.sql).not.toContain('LIMIT {limit')
    expect(stream.settings).toMatchObject({ max_block_size: 8192, format_csv_null_representation: '' })
    wellFormed(exportEventsCountStatement(req))
  })
})

describe('sql/queries templates', () => {
  const dir = new URL('../../sql/queries/', import.meta.url)
  const files = readdirSync(dir).filter((f) => f.endsWith('.sql') && !f.startsWith('_'))

  /** A file's text with its partials' texts after it, where slots may be too. */
  const withPartials = (file: string): string => {
    const text = readFileSync(new URL(file, dir), 'utf8')
    return [text, ...[...text.matchAll(/\{\{>\s*(\w+)\s*\}\}/g)].map((m) => withPartials(`_${m[1]}.sql`))].join('\n')
  }

  it('every statement renders once each of its slots has SQL, with its partials in place', () => {
    for (const file of files) {
      const name = file.replace(/\.sql$/, '')
      const slots = [...new Set([...withPartials(file).matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!))]
      const sql = renderSql(name, Object.fromEntries(slots.map((s) => [s, `/*${s}*/`])))
      expect(sql, file).not.toMatch(/\{\{/)
      for (const s of slots) expect(sql, file).toContain(`/*${s}*/`)
    }
  })

  it('a slot left without SQL is an error naming the file and the slot', () => {
    expect(() => renderSql('insights_breakdown', {})).toThrow(/insights_breakdown\.sql: no fragment for \{\{\w+\}\}/)
  })

  it('a partial is placed without its comment lines', () => {
    const sql = renderSql('sealed_build_page_views')
    expect(sql).toContain('AND session_key NOT IN (')
    expect(sql).not.toContain("The events a build's page tables sum")
  })
})

describe('what the runner sends', () => {
  const stmt: Statement = { name: 's', sql: 'SELECT 1;\n', params: {}, settings: { join_use_nulls: 1, x: 'y' } }

  it('the statement, its settings after the time limit and read-only, then the format', () => {
    expect(finalSql(stmt, { timeoutS: 2.5 }, 'JSONEachRow', 'qid')).toBe(
      "SELECT 1\nSETTINGS max_execution_time = 2.5, output_format_json_quote_64bit_integers = 0, optimize_use_implicit_projections = 0, join_use_nulls = 1, x = 'y', log_comment = 'qid', readonly = 2\nFORMAT JSONEachRow",
    )
    expect(finalSql(stmt, { timeoutS: 1, readonly: false }, 'CSV')).not.toContain('readonly')
  })

  it('a read must be a query that writes nothing', () => {
    for (const ok of ['SELECT 1', '  -- c\nWITH a AS (SELECT 1) SELECT * FROM a', '/* x */ (SELECT 1)']) expect(() => assertReadStatement(ok), ok).not.toThrow()
    for (const bad of ['INSERT INTO t SELECT 1', 'SELECT 1 INTO OUTFILE \'f\'', 'DROP TABLE t', 'ALTER TABLE t DELETE WHERE 1']) {
      expect(() => assertReadStatement(bad), bad).toThrow(/read-only/)
    }
  })

  it('a read may run its time limit plus at least 1 s and at most 5 s more', () => {
    expect(readDeadlineMs(0.5)).toBe(1500)
    expect(readDeadlineMs(4)).toBe(6000)
    expect(readDeadlineMs(3600)).toBe(3_605_000)
  })
})
