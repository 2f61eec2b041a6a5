/**
 * What a request becomes before any query: the query reader (repeated keys, bracket filters, JSON
 * parameters, every problem at once), signed tokens and the cursors built on them.
 */
import { z } from '@hono/zod-openapi'
import { DateTime } from 'luxon'
import { describe, expect, it } from 'vitest'
import { InvalidInput } from '../../src/query/errors.ts'
import { makeCursor, readCursor } from '../../src/query/events-cursor.ts'
import { fingerprint, nextCursor, pagePosition } from '../../src/query/pagination.ts'
import { signToken, verifyToken } from '../../src/query/signed-token.ts'
import { issueDetails, jsonParam, querySchema } from '../../src/routes/query-reader.ts'

const KEY = Buffer.alloc(32, 7)
const OTHER_KEY = Buffer.alloc(32, 8)

function refusal(run: () => unknown): InvalidInput {
  try {
    run()
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInput)
    return err as InvalidInput
  }
  throw new Error('expected a refusal')
}

describe('the query reader', () => {
  const Filter = z.object({ name: z.string(), operator: z.string(), value: z.array(z.string()) }).strict()
  const schema = querySchema(
    z
      .object({
        limit: z.coerce.number().int().max(100).optional(),
        event: jsonParam(z.union([z.string(), z.array(z.string())])).optional(),
        filters: jsonParam(z.array(Filter)).optional(),
      })
      .strict(),
  )
  const read = (query: Record<string, string | string[]>) => schema.safeParse(query)

  it('repeated keys arrive as arrays, single ones as strings', () => {
    expect(read({ event: ['a', 'b'] }).data).toEqual({ event: ['a', 'b'] })
    expect(read({ event: 'a' }).data).toEqual({ event: 'a' })
  })

  it('a JSON value is decoded; text that does not look like JSON is left as it is', () => {
    expect(read({ event: '["a","b"]' }).data).toEqual({ event: ['a', 'b'] })
    expect(read({ event: 'plain' }).data).toEqual({ event: 'plain' })
  })

  it('bracket filters fold into filters, values by index or repeated', () => {
    const parsed = read({
      'filters[0][name]': 'path',
      'filters[0][operator]': 'is',
      'filters[0][value][1]': '/b',
      'filters[0][value][0]': '/a',
      'filters[1][name]': 'country',
      'filters[1][operator]': 'is',
      'filters[1][value]': ['SE', 'DE'],
    })
    expect(parsed.data).toEqual({
      filters: [
        { name: 'path', operator: 'is', value: ['/a', '/b'] },
        { name: 'country', operator: 'is', value: ['SE', 'DE'] },
      ],
    })
  })

  it('a bracket filter without values has an empty list', () => {
    expect(read({ 'filters[0][name]': 'path', 'filters[0][operator]': 'isNull' }).data).toEqual({ filters: [{ name: 'path', operator: 'isNull', value: [] }] })
  })

  it('explain is answered elsewhere and set aside', () => {
    expect(read({ explain: 'sql', limit: '5' }).data).toEqual({ limit: 5 })
  })

  it('every problem at once: bad JSON, both notations, bad values, each unknown parameter', () => {
    const bad = read({ event: '[oops', limit: '1000', nope: 'x', other: 'y' })
    const details = issueDetails(bad.error!.issues)
    expect(details).toHaveLength(4)
    expect(details).toEqual(
      expect.arrayContaining([
        { path: 'limit', message: expect.any(String) },
        { path: 'event', message: 'is not valid JSON' },
        { path: 'nope', message: 'unknown parameter' },
        { path: 'other', message: 'unknown parameter' },
      ]),
    )
    const both = read({ filters: '[]', 'filters[0][name]': 'path', 'filters[0][operator]': 'is' })
    expect(issueDetails(both.error!.issues)).toEqual([{ path: 'filters', message: 'use either JSON or bracket notation, not both' }])
  })

  it('an issue without a path is the query as a whole', () => {
    expect(issueDetails([{ code: 'custom', path: [], message: 'm', input: undefined }])).toEqual([{ path: '(query)', message: 'm' }])
  })
})

describe('signed tokens', () => {
  it('round trip', () => {
    expect(verifyToken(signToken({ a: 1, b: ['x'] }, KEY), KEY)).toEqual({ a: 1, b: ['x'] })
  })

  it('another key, an edited body or mac, junk and over-long tokens are not ours', () => {
    const token = signToken({ a: 1 }, KEY)
    const [body, mac] = token.split('.')
    const edited = Buffer.from(JSON.stringify({ a: 2 })).toString('base64url')
    expect(verifyToken(token, OTHER_KEY)).toBeUndefined()
    expect(verifyToken(`${edited}.${mac}`, KEY)).toBeUndefined()
    expect(verifyToken(`${body}.${mac!.slice(0, -2)}AA`, KEY)).toBeUndefined()
    expect(verifyToken('no-dot', KEY)).toBeUndefined()
    expect(verifyToken(`${'a'.repeat(4096)}.${mac}`, KEY)).toBeUndefined()
  })
})

describe('ranking cursors', () => {
  const range = {
    start: DateTime.fromISO('2026-04-01T00:00:00', { zone: 'Europe/Stockholm' }),
    end: DateTime.fromISO('2026-04-08T00:00:00', { zone: 'Europe/Stockholm' }),
    timezone: 'Europe/Stockholm',
  }

  it('the fingerprint ignores the page (cursor, limit), not what defines the ranking', () => {
    expect(fingerprint('p/pages', { range: '7d', limit: 10, cursor: 'x' })).toBe(fingerprint('p/pages', { range: '7d', limit: 50 }))
    expect(fingerprint('p/pages', { range: '7d' })).not.toBe(fingerprint('p/pages', { range: '30d' }))
    expect(fingerprint('p/pages', { range: '7d' })).not.toBe(fingerprint('q/pages', { range: '7d' }))
  })

  it('a page number is an offset of whole pages; 0 is refused', () => {
    expect(pagePosition(undefined, 10, 'fp', KEY)).toEqual({ offset: 0 })
    expect(pagePosition('3', 10, 'fp', KEY)).toEqual({ offset: 20 })
    expect(refusal(() => pagePosition('0', 10, 'fp', KEY)).code).toBe('invalid_cursor')
  })

  it('a signed cursor pins the offset and the first page\'s window', () => {
    const position = pagePosition(nextCursor(30, range, 'fp', KEY), 10, 'fp', KEY)
    expect(position.offset).toBe(30)
    expect(position.range!.start.toMillis()).toBe(range.start.toMillis())
    expect(position.range!.end.toMillis()).toBe(range.end.toMillis())
    expect(position.range!.timezone).toBe('Europe/Stockholm')
  })

  it('a cursor of other parameters, or not ours, is invalid_cursor at `cursor`', () => {
    const err = refusal(() => pagePosition(nextCursor(30, range, 'fp', KEY), 10, 'other', KEY))
    expect([err.code, err.details]).toEqual(['invalid_cursor', [{ path: 'cursor', message: expect.stringContaining('other parameters') }]])
    expect(refusal(() => pagePosition('abc.def', 10, 'fp', KEY)).code).toBe('invalid_cursor')
  })
})

describe('export cursors', () => {
  const window = {
    from: DateTime.fromISO('2026-04-01T00:00:00Z', { zone: 'UTC' }),
    to: DateTime.fromISO('2026-04-02T00:00:00Z', { zone: 'UTC' }),
    timezone: 'UTC',
  }
  const last = { createdAt: '2026-04-01T12:34:56.789Z', id: '0190a3c4-1111-7000-8000-000000000001' }

  it('carry the last row as ClickHouse UTC text, its id, the window and the next page number', () => {
    const read = readCursor(makeCursor(last, window, 4, 'fp', KEY), 'fp', KEY)
    expect(read.after).toEqual({ createdAt: '2026-04-01 12:34:56.789', id: last.id })
    expect(read.page).toBe(4)
    expect([read.window.from.toMillis(), read.window.to.toMillis()]).toEqual([window.from.toMillis(), window.to.toMillis()])
  })

  it('a cursor of another export, another key, or a forged payload is refused', () => {
    const token = makeCursor(last, window, 2, 'fp', KEY)
    expect(refusal(() => readCursor(token, 'other', KEY)).code).toBe('invalid_cursor')
    expect(refusal(() => readCursor(token, 'fp', OTHER_KEY)).code).toBe('invalid_cursor')
    const forged = signToken({ a: "1' OR 1=1", i: last.id, f: '', t: '', tz: 'UTC', n: 2, fp: 'fp' }, KEY)
    expect(refusal(() => readCursor(forged, 'fp', KEY)).code).toBe('invalid_cursor')
  })
})
