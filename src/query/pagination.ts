import { createHash } from 'node:crypto'
import { DateTime } from 'luxon'
import { invalidCursor } from './errors.ts'
import { signToken, verifyToken } from './signed-token.ts'
import type { TimeRange } from './time-range.ts'

interface RankCursor {
  /** Offset of the next page's first row. */
  o: number
  /** The first page's resolved window and timezone, so later pages read the same window. */
  s: string
  e: string
  tz: string
  /** Which route and parameters the cursor belongs to. */
  fp: string
}

/** A hash of everything that defines a ranking except the page: route, window inputs, filters. */
export function fingerprint(route: string, query: Record<string, unknown>): string {
  const { cursor: _cursor, limit: _limit, ...defining } = query
  const canonical = JSON.stringify([route, Object.entries(defining).sort(([a], [b]) => a.localeCompare(b))])
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 22)
}

export interface PagePosition {
  offset: number
  /** Present when a cursor pinned the window. */
  range?: TimeRange
}


/**
 * Where a page starts: a plain integer is a 1-based page number (OpenPanel's older contract);
 * anything else must be a cursor this service signed for the same route and parameters.
 */
export function pagePosition(cursor: string | undefined, limit: number, fp: string, key: Buffer): PagePosition {
  if (cursor === undefined) return { offset: 0 }
  if (/^\d{1,9}$/.test(cursor)) {
    const page = Number(cursor)
    if (page < 1) throw invalidCursor('a page number starts at 1')
    return { offset: (page - 1) * limit }
  }
  const payload = verifyToken(cursor, key) as RankCursor | undefined
  if (!payload || typeof payload.o !== 'number' || typeof payload.tz !== 'string') {
    throw invalidCursor('the cursor is not one this service issued')
  }
  if (payload.fp !== fp) throw invalidCursor('the cursor belongs to a request with other parameters')
  const start = DateTime.fromISO(payload.s, { zone: payload.tz })
  const end = DateTime.fromISO(payload.e, { zone: payload.tz })
  if (!start.isValid || !end.isValid) throw invalidCursor('the cursor is not one this service issued')
  return { offset: payload.o, range: { start, end, timezone: payload.tz } }
}

export function nextCursor(offset: number, range: TimeRange, fp: string, key: Buffer): string {
  const payload: RankCursor = {
    o: offset,
    s: range.start.toISO() ?? '',
    e: range.end.toISO() ?? '',
    tz: range.timezone,
    fp,
  }
  return signToken(payload, key)
}
