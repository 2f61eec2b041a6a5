/**
 * Windows and buckets, without an engine. Every expected instant is written out from the calendar
 * (offsets of Stockholm: +01:00 in winter, +02:00 from the last Sunday of March, 02:00 local).
 */
import { DateTime } from 'luxon'
import { describe, expect, it } from 'vitest'
import { InvalidInput } from '../../src/query/errors.ts'
import {
  buckets,
  clickhouseInstant,
  defaultInterval,
  isoWithOffset,
  namedRange,
  parseBoundary,
  previousRange,
  RANGES,
  resolveRange,
  timezoneSpelling,
  type TimeRange,
} from '../../src/query/time-range.ts'

const UTC_NOW = new Date(Date.UTC(2026, 3, 14, 22, 37, 15, 500)) // 2026-04-14T22:37:15.500Z, a Tuesday
const at = (iso: string) => Date.parse(iso)
const window = (r: TimeRange) => [r.start.toMillis(), r.end.toMillis()]

describe('named ranges (UTC, at 2026-04-14 22:37:15.5)', () => {
  const cases: [string, string, string][] = [
    ['30min', '2026-04-14T22:07:00Z', '2026-04-14T22:38:00Z'],
    ['lastHour', '2026-04-14T21:37:00Z', '2026-04-14T22:38:00Z'],
    ['last24h', '2026-04-13T22:37:00Z', '2026-04-14T22:38:00Z'],
    ['today', '2026-04-14T00:00:00Z', '2026-04-15T00:00:00Z'],
    ['yesterday', '2026-04-13T00:00:00Z', '2026-04-14T00:00:00Z'],
    ['7d', '2026-04-07T00:00:00Z', '2026-04-15T00:00:00Z'],
    ['30d', '2026-03-15T00:00:00Z', '2026-04-15T00:00:00Z'],
    ['3m', '2026-01-14T00:00:00Z', '2026-04-15T00:00:00Z'],
    ['6m', '2025-10-14T00:00:00Z', '2026-04-15T00:00:00Z'],
    ['12m', '2025-04-01T00:00:00Z', '2026-05-01T00:00:00Z'],
    ['monthToDate', '2026-04-01T00:00:00Z', '2026-04-15T00:00:00Z'],
    ['lastMonth', '2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z'],
    ['yearToDate', '2026-01-01T00:00:00Z', '2026-04-15T00:00:00Z'],
    ['lastYear', '2025-01-01T00:00:00Z', '2026-01-01T00:00:00Z'],
    ['custom', '2026-03-15T00:00:00Z', '2026-04-15T00:00:00Z'],
  ]
  it('covers every range name', () => {
    expect(cases.map(([name]) => name).sort()).toEqual([...RANGES].sort())
  })
  for (const [name, start, end] of cases) {
    it(name, () => {
      const r = namedRange(name as (typeof RANGES)[number], DateTime.fromJSDate(UTC_NOW, { zone: 'UTC' }))
      expect([r.start.toMillis(), r.end.toMillis()]).toEqual([at(start), at(end)])
    })
  }

  it('7d in Stockholm starts at local midnight seven days back, across the DST change', () => {
    const now = new Date(Date.UTC(2026, 2, 31, 10)) // 31 March, after the change on the 29th
    const r = resolveRange({ range: '7d' }, 'Europe/Stockholm', now, '30d')
    expect(window(r)).toEqual([at('2026-03-24T00:00:00+01:00'), at('2026-04-01T00:00:00+02:00')])
  })
})

describe('parseBoundary', () => {
  it('a date is the whole local day: its start, or the next midnight for an end', () => {
    expect(parseBoundary('2026-03-29', 'start', 'Europe/Stockholm')!.toMillis()).toBe(at('2026-03-29T00:00:00+01:00'))
    expect(parseBoundary('2026-03-29', 'end', 'Europe/Stockholm')!.toMillis()).toBe(at('2026-03-30T00:00:00+02:00'))
  })

  it('with Z or an offset it is that instant; an end is inclusive to the millisecond', () => {
    expect(parseBoundary('2026-04-01T10:00:00Z', 'start', 'Asia/Tokyo')!.toMillis()).toBe(at('2026-04-01T10:00:00Z'))
    expect(parseBoundary('2026-04-01T10:00:00+05:30', 'end', 'UTC')!.toMillis()).toBe(at('2026-04-01T04:30:00.001Z'))
  })

  it('without an offset it is local wall-clock time; a space may stand for T', () => {
    expect(parseBoundary('2026-01-10 08:15', 'start', 'America/New_York')!.toMillis()).toBe(at('2026-01-10T13:15:00Z'))
  })

  it('anything else is undefined', () => {
    for (const bad of ['yesterday', '2026-02-30', '2026-13-01', '10:00', '2026-04-01T25:00:00Z', '']) {
      expect(parseBoundary(bad, 'start', 'UTC'), bad).toBeUndefined()
    }
  })
})

describe('resolveRange', () => {
  it('the default range when none is given', () => {
    expect(window(resolveRange({}, 'UTC', UTC_NOW, '7d'))).toEqual([at('2026-04-07T00:00:00Z'), at('2026-04-15T00:00:00Z')])
  })

  it('startDate and endDate override the range', () => {
    const r = resolveRange({ range: '30d', startDate: '2026-04-01', endDate: '2026-04-02' }, 'UTC', UTC_NOW, '7d')
    expect(window(r)).toEqual([at('2026-04-01T00:00:00Z'), at('2026-04-03T00:00:00Z')])
  })

  it('reports both bad dates at once, each at its parameter', () => {
    try {
      resolveRange({ startDate: 'x', endDate: 'y' }, 'UTC', UTC_NOW, '7d')
      expect.unreachable()
    } catch (err) {
      expect((err as InvalidInput).code).toBe('invalid_parameters')
      expect((err as InvalidInput).details.map((d) => d.path)).toEqual(['startDate', 'endDate'])
    }
  })

  it('a start not before the end, and a span over five years, are refused', () => {
    expect(() => resolveRange({ startDate: '2026-04-02', endDate: '2026-04-01' }, 'UTC', UTC_NOW, '7d')).toThrow(/before the end/)
    expect(() => resolveRange({ startDate: '2020-01-01', endDate: '2026-01-01' }, 'UTC', UTC_NOW, '7d')).toThrow(/5 years/)
  })

  it('takes the engine-independent spelling of a mis-cased zone', () => {
    expect(resolveRange({}, 'europe/stockholm', UTC_NOW, '7d').timezone).toBe('Europe/Stockholm')
  })
})

describe('previousRange, defaultInterval, buckets', () => {
  it('the period just before, of the same length in milliseconds', () => {
    const r = resolveRange({ startDate: '2026-04-10', endDate: '2026-04-12' }, 'UTC', UTC_NOW, '7d')
    expect(window(previousRange(r))).toEqual([at('2026-04-07T00:00:00Z'), at('2026-04-10T00:00:00Z')])
  })

  it("OpenPanel's bucket size: hours within a day, days up to 92, weeks up to 186, then months", () => {
    const span = (days: number) => resolveRange({ startDate: '2025-01-01T00:00:00Z', endDate: new Date(Date.UTC(2025, 0, 1) + days * 86_400_000 - 1).toISOString() }, 'UTC', UTC_NOW, '7d')
    expect(defaultInterval(resolveRange({ range: 'today' }, 'UTC', UTC_NOW, '7d'))).toBe('hour')
    expect(defaultInterval(span(92))).toBe('day')
    expect(defaultInterval(span(93))).toBe('week')
    expect(defaultInterval(span(186))).toBe('week')
    expect(defaultInterval(span(187))).toBe('month')
  })

  it('hour buckets over the autumn change in New York: 25 local hours, 1 am twice', () => {
    const r = resolveRange({ startDate: '2025-11-02', endDate: '2025-11-02' }, 'America/New_York', UTC_NOW, '7d')
    const starts = buckets(r, 'hour').map((t) => t.toMillis())
    expect(starts).toHaveLength(25)
    expect(starts[0]).toBe(at('2025-11-02T04:00:00Z'))
    expect(starts.every((t, i) => i === 0 || t - starts[i - 1]! === 3_600_000)).toBe(true)
  })

  it('week buckets start on Monday, the first one before the window when it starts midweek', () => {
    const r = resolveRange({ startDate: '2026-04-08', endDate: '2026-04-20' }, 'UTC', UTC_NOW, '7d')
    expect(buckets(r, 'week').map(isoWithOffset)).toEqual(['2026-04-06T00:00:00Z', '2026-04-13T00:00:00Z', '2026-04-20T00:00:00Z'])
  })

  it('month buckets in Stockholm keep local midnight on either side of DST', () => {
    const r = resolveRange({ startDate: '2026-02-10', endDate: '2026-04-10' }, 'Europe/Stockholm', UTC_NOW, '7d')
    expect(buckets(r, 'month').map(isoWithOffset)).toEqual(['2026-02-01T00:00:00+01:00', '2026-03-01T00:00:00+01:00', '2026-04-01T00:00:00+02:00'])
  })
})

describe('formatting instants', () => {
  it('ClickHouse UTC text with milliseconds, from any zone', () => {
    expect(clickhouseInstant(DateTime.fromISO('2026-03-29T03:04:05.067+02:00', { setZone: true }))).toBe('2026-03-29 01:04:05.067')
  })
  it('ISO without milliseconds, with the offset in force', () => {
    expect(isoWithOffset(DateTime.fromMillis(at('2026-07-01T10:00:00Z'), { zone: 'Europe/Stockholm' }))).toBe('2026-07-01T12:00:00+02:00')
  })
  it('timezoneSpelling leaves a proper name and an unknown one alone', () => {
    expect(timezoneSpelling('Asia/Kolkata')).toBe('Asia/Kolkata')
    expect(timezoneSpelling('Not/AZone')).toBe('Not/AZone')
  })
})
