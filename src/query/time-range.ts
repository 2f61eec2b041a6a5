import { DateTime, type DateTimeUnit } from 'luxon'
import { invalidParameters } from './errors.ts'

export const RANGES = [
  '30min',
  'lastHour',
  'last24h',
  'today',
  'yesterday',
  '7d',
  '30d',
  '3m',
  '6m',
  '12m',
  'monthToDate',
  'lastMonth',
  'yearToDate',
  'lastYear',
  'custom',
] as const
export type RangeName = (typeof RANGES)[number]

export const INTERVALS = ['minute', 'hour', 'day', 'week', 'month'] as const
export type Interval = (typeof INTERVALS)[number]

/** A half-open window [start, end) of instants, and the timezone its calendar is read in. */
export interface TimeRange {
  start: DateTime
  end: DateTime
  timezone: string
}

const MAX_SPAN_YEARS = 5
export const MAX_BUCKETS = 10_000

/**
 * OpenPanel's spans (contract §3.1), made half-open: where OpenPanel ends at 23:59:59 or at
 * the end of a minute, the window here ends at the next midnight or minute, so no event in
 * the last second is lost.
 */
export function namedRange(range: RangeName, now: DateTime): { start: DateTime; end: DateTime } {
  const today = now.startOf('day')
  const tomorrow = today.plus({ days: 1 })
  const nextMinute = now.startOf('minute').plus({ minutes: 1 })
  switch (range) {
    case '30min':
      return { start: now.minus({ minutes: 30 }).startOf('minute'), end: nextMinute }
    case 'lastHour':
      return { start: now.minus({ hours: 1 }).startOf('minute'), end: nextMinute }
    case 'last24h':
      return { start: now.minus({ hours: 24 }).startOf('minute'), end: nextMinute }
    case 'today':
      return { start: today, end: tomorrow }
    case 'yesterday':
      return { start: today.minus({ days: 1 }), end: today }
    case '7d':
      return { start: today.minus({ days: 7 }), end: tomorrow }
    case '3m':
      return { start: now.minus({ months: 3 }).startOf('day'), end: tomorrow }
    case '6m':
      return { start: now.minus({ months: 6 }).startOf('day'), end: tomorrow }
    case '12m':
      return { start: now.minus({ months: 12 }).startOf('month'), end: now.startOf('month').plus({ months: 1 }) }
    case 'monthToDate':
      return { start: now.startOf('month'), end: tomorrow }
    case 'lastMonth':
      return { start: now.startOf('month').minus({ months: 1 }), end: now.startOf('month') }
    case 'yearToDate':
      return { start: now.startOf('year'), end: tomorrow }
    case 'lastYear':
      return { start: now.startOf('year').minus({ years: 1 }), end: now.startOf('year') }
    case '30d':
    case 'custom':
      return { start: today.minus({ days: 30 }), end: tomorrow }
  }
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/
const HAS_OFFSET = /(Z|[+-]\d{2}(:?\d{2})?)$/i

/**
 * A date is a whole project-local day; a date-time with Z or an offset is that instant;
 * one without is project-local wall-clock time. `end` dates include their whole day and
 * `end` date-times are inclusive to the millisecond.
 */
export function parseBoundary(raw: string, which: 'start' | 'end', timezone: string): DateTime | undefined {
  const text = raw.trim()
  if (DATE_ONLY.test(text)) {
    const day = DateTime.fromISO(text, { zone: timezone })
    if (!day.isValid) return undefined
    return which === 'start' ? day : day.plus({ days: 1 })
  }
  const normalized = text.replace(' ', 'T')
  const parsed = HAS_OFFSET.test(normalized)
    ? DateTime.fromISO(normalized, { setZone: true }).setZone(timezone)
    : DateTime.fromISO(normalized, { zone: timezone })
  if (!parsed.isValid || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(normalized)) return undefined
  return which === 'start' ? parsed : parsed.plus({ milliseconds: 1 })
}

export interface RangeInput {
  range?: RangeName
  startDate?: string
  endDate?: string
}

/** The engine's own spelling of every zone it knows, by lower-cased name (see learnEngineTimezones). */
const engineZones = new Map<string, string>()

/**
 * The zone names the engine accepts (system.time_zones), read once when the runtime opens. Intl
 * cannot tell `Asia/Kolkata` from `Asia/kolkata` (both resolve to Asia/Calcutta), ClickHouse can.
 */
export function learnEngineTimezones(names: readonly string[]): void {
  for (const name of names) engineZones.set(name.toLowerCase(), name)
}

/**
 * Intl (and so validation and luxon) accepts IANA names in any case, ClickHouse only in their own:
 * `europe/stockholm` or `Asia/kolkata` would pass validation and then fail the query. A name takes
 * the engine's spelling of it; a name the engine does not know (or before it has been asked) takes
 * Intl's resolution when it differs only by case or is written all in lower case.
 */
export function timezoneSpelling(timezone: string): string {
  const known = engineZones.get(timezone.toLowerCase())
  if (known) return known
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone
    const miscased = resolved.toLowerCase() === timezone.toLowerCase() || timezone === timezone.toLowerCase()
    return miscased ? resolved : timezone
  } catch {
    return timezone
  }
}

export function resolveRange(input: RangeInput, zone: string, now: Date, defaultRange: RangeName): TimeRange {
  const timezone = timezoneSpelling(zone)
  const local = DateTime.fromJSDate(now, { zone: timezone })
  const named = namedRange(input.range ?? defaultRange, local)
  const issues: { path: string; message: string }[] = []
  let start = named.start
  let end = named.end
  if (input.startDate !== undefined) {
    const parsed = parseBoundary(input.startDate, 'start', timezone)
    if (parsed) start = parsed
    else issues.push({ path: 'startDate', message: 'expected YYYY-MM-DD or an ISO 8601 date-time' })
  }
  if (input.endDate !== undefined) {
    const parsed = parseBoundary(input.endDate, 'end', timezone)
    if (parsed) end = parsed
    else issues.push({ path: 'endDate', message: 'expected YYYY-MM-DD or an ISO 8601 date-time' })
  }
  if (issues.length === 0 && start >= end) {
    issues.push({ path: input.startDate !== undefined ? 'startDate' : 'endDate', message: 'the start must be before the end' })
  }
  if (issues.length === 0 && end.diff(start, 'years').years > MAX_SPAN_YEARS) {
    issues.push({ path: input.startDate !== undefined ? 'startDate' : 'endDate', message: `the span may not exceed ${MAX_SPAN_YEARS} years` })
  }
  if (issues.length > 0) throw invalidParameters(issues)
  return { start, end, timezone }
}

/** The period of equal length just before. */
export function previousRange(r: TimeRange): TimeRange {
  const length = r.end.toMillis() - r.start.toMillis()
  return { start: r.start.minus({ milliseconds: length }), end: r.start, timezone: r.timezone }
}

/** OpenPanel's automatic bucket size for /metrics (contract §3.3). */
export function defaultInterval(r: TimeRange): Interval {
  const lastInstant = r.end.minus({ milliseconds: 1 })
  if (lastInstant.hasSame(r.start, 'day')) return 'hour'
  const days = Math.floor(r.end.diff(r.start, 'days').days)
  if (days <= 92) return 'day'
  if (days <= 186) return 'week'
  return 'month'
}

/** Start instants of every bucket that overlaps the range, in the range's timezone. */
export function buckets(r: TimeRange, interval: Interval): DateTime[] {
  const unit: DateTimeUnit = interval
  const out: DateTime[] = []
  let cursor = r.start.setZone(r.timezone).startOf(unit)
  while (cursor < r.end) {
    out.push(cursor)
    if (out.length > MAX_BUCKETS) break
    cursor = cursor.plus({ [interval]: 1 })
  }
  return out
}

/** The buckets of a window a response lays out; more than MAX_BUCKETS is the caller's to fix, as `advice` says. */
export function boundedBuckets(r: TimeRange, interval: Interval, advice: string): DateTime[] {
  const starts = buckets(r, interval)
  if (starts.length > MAX_BUCKETS) {
    throw invalidParameters([{ path: 'interval', message: `more than ${MAX_BUCKETS} ${interval} buckets; ${advice}` }])
  }
  return starts
}

/** ISO 8601 with milliseconds dropped and the offset in force at that instant. */
export const isoWithOffset = (t: DateTime): string => t.toISO({ suppressMilliseconds: true }) ?? ''

/** The UTC wall clock as ClickHouse parses a DateTime64(3, 'UTC') parameter. */
export const clickhouseInstant = (t: DateTime): string => t.toUTC().toFormat('yyyy-LL-dd HH:mm:ss.SSS')
