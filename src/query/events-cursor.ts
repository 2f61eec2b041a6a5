import { DateTime } from 'luxon'
import { invalidCursor } from './errors.ts'
import type { ExportWindow, KeysetPosition } from './export-events.ts'
import { signToken, verifyToken } from './signed-token.ts'
import { clickhouseInstant } from './time-range.ts'

/**
 * The cursor of /export/events: the last row's keyset position and the first page's window,
 * signed, so every page of one export reads the same window and continues after the row where the
 * page before stopped (OFFSET would skip or repeat rows that arrive meanwhile).
 */
interface EventsCursor {
  /** Last row's created_at (ClickHouse UTC text) and id. */
  a: string
  i: string
  /** The first page's resolved window, ISO with offset, and its timezone. */
  f: string
  t: string
  tz: string
  /** Page number of the page the cursor opens. */
  n: number
  fp: string
}


const CH_INSTANT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export function readCursor(token: string, fp: string, key: Buffer): { window: ExportWindow; after: KeysetPosition; page: number } {
  const payload = verifyToken(token, key) as Partial<EventsCursor> | undefined
  if (
    !payload ||
    typeof payload.a !== 'string' ||
    !CH_INSTANT.test(payload.a) ||
    typeof payload.i !== 'string' ||
    !UUID.test(payload.i) ||
    typeof payload.tz !== 'string' ||
    typeof payload.n !== 'number'
  ) {
    throw invalidCursor('the cursor is not one this service issued')
  }
  if (payload.fp !== fp) throw invalidCursor('the cursor belongs to a request with other parameters')
  const from = DateTime.fromISO(String(payload.f), { zone: payload.tz })
  const to = DateTime.fromISO(String(payload.t), { zone: payload.tz })
  if (!from.isValid || !to.isValid) throw invalidCursor('the cursor is not one this service issued')
  return { window: { from, to, timezone: payload.tz }, after: { createdAt: payload.a, id: payload.i }, page: payload.n }
}

export function makeCursor(last: { createdAt: string; id: string }, window: ExportWindow, page: number, fp: string, key: Buffer): string {
  const payload: EventsCursor = {
    a: clickhouseInstant(DateTime.fromISO(last.createdAt, { zone: 'UTC' })),
    i: last.id,
    f: window.from.toISO() ?? '',
    t: window.to.toISO() ?? '',
    tz: window.timezone,
    n: page,
    fp,
  }
  return signToken(payload, key)
}
