/** The importer's pieces without an engine: the CSV reader and the row checker. */
import { describe, expect, it } from 'vitest'
import { readCsv, type CsvItem } from '../src/import/csv.ts'
import { parseInstant, RowError, toEventRow } from '../src/import/event-row.ts'
import { formatOf } from '../src/import/sources.ts'

async function csv(text: string, chunkSize = text.length || 1): Promise<CsvItem[]> {
  async function* chunks() {
    for (let i = 0; i < text.length; i += chunkSize) yield text.slice(i, i + chunkSize)
  }
  const out: CsvItem[] = []
  for await (const item of readCsv(chunks())) out.push(item)
  return out
}

describe('CSV reader', () => {
  const text =
    'name,path,"quoted ""header"""\r\n' +
    'a,/x,1\r\n' +
    '\r\n' + // blank: skipped, still counted
    'b,"/multi\nline\npath",\\N\n' +
    'c,"\\N","say ""hi"", twice"\n' +
    '"",,\n' +
    'd,"/tail",end'
  const expected: CsvItem[] = [
    { line: 1, cells: ['name', 'path', 'quoted "header"'] },
    { line: 2, cells: ['a', '/x', '1'] },
    { line: 4, cells: ['b', '/multi\nline\npath', null] },
    { line: 7, cells: ['c', '\\N', 'say "hi", twice'] },
    { line: 8, cells: ['', '', ''] },
    { line: 9, cells: ['d', '/tail', 'end'] },
  ]

  it('reads quotes, escaped quotes, line breaks in cells, CRLF, \\N and a last line without an end', async () => {
    expect(await csv(text)).toEqual(expected)
  })

  it('reads the same whatever the chunks', async () => {
    for (let size = 1; size <= 12; size++) expect(await csv(text, size), `chunks of ${size}`).toEqual(expected)
  })

  it('says where an unclosed quote opened', async () => {
    expect(await csv('a,b\n1,2\n3,"open\nand on\n')).toEqual([
      { line: 1, cells: ['a', 'b'] },
      { line: 2, cells: ['1', '2'] },
      { line: 3, error: 'a quoted field opened on line 3 never closes' },
    ])
  })
})

describe('instants', () => {
  const ms = (iso: string) => new Date(iso).getTime()
  it.each([
    ['2026-04-14T22:37:12.345Z', ms('2026-04-14T22:37:12.345Z')],
    ['2026-04-14 22:37:12.345', ms('2026-04-14T22:37:12.345Z')],
    ['2026-04-14 22:37:12', ms('2026-04-14T22:37:12.000Z')],
    ['2026-04-14T22:37:12.345678Z', ms('2026-04-14T22:37:12.345Z')],
    ['2026-04-15T00:37:12.345+02:00', ms('2026-04-14T22:37:12.345Z')],
    ['2026-04-14T18:07:12-0430', ms('2026-04-14T22:37:12.000Z')],
    ['2026-04-14', ms('2026-04-14T00:00:00.000Z')],
    [1776206232345, 1776206232345],
  ])('%s', (input, want) => {
    expect(parseInstant(input)).toBe(want)
  })

  it.each(['2026-02-30', '2026-13-01', '2026-04-14T24:00:00Z', 'yesterday', '', '14/04/2026', true])('refuses %s', (input) => {
    expect(parseInstant(input)).toBeUndefined()
  })
})

describe('rows', () => {
  const ctx = { projectId: 'p', importedAt: '2026-05-01 00:00:00' }

  it('read OpenPanel export objects and events rows alike', () => {
    const openPanel = toEventRow(
      {
        id: '0B6C0C1E-4A6D-4C53-9D3E-2A3C9A8E1F01',
        name: 'screen_view',
        deviceId: 'dev',
        profileId: 'user',
        projectId: 'elsewhere',
        sessionId: 's',
        createdAt: '2026-04-01T10:00:00.250Z',
        path: '/p',
        duration: 1500,
        properties: { b: 2, a: 'x', c: null, d: { nested: true } },
        latitude: 59.33,
        longitude: null,
        osVersion: '17.4',
        referrerName: 'Google',
        profile: { id: 'user', firstName: 'ignored' },
      },
      ctx,
    )
    const events = toEventRow(
      {
        id: '0b6c0c1e-4a6d-4c53-9d3e-2a3c9a8e1f01',
        name: 'screen_view',
        device_id: 'dev',
        profile_id: 'user',
        session_id: 's',
        created_at: '2026-04-01 10:00:00.250',
        path: '/p',
        duration: '1500',
        properties: '{"a":"x","b":"2","c":"","d":"{\\"nested\\":true}"}',
        latitude: '59.33',
        longitude: '\\N',
        os_version: '17.4',
        referrer_name: 'Google',
      },
      ctx,
    )
    expect(openPanel).toEqual(events)
    expect(openPanel).toMatchObject({
      id: '0b6c0c1e-4a6d-4c53-9d3e-2a3c9a8e1f01',
      project_id: 'p',
      created_at: '2026-04-01 10:00:00.250',
      duration: 1500,
      properties: { a: 'x', b: '2', c: '', d: '{"nested":true}' },
      latitude: 59.33,
      longitude: null,
      os_version: '17.4',
      referrer_name: 'Google',
      imported_at: '2026-05-01 00:00:00',
    })
    expect(Object.keys(openPanel)[0]).toBe('id')
    expect(Object.keys(openPanel).at(-1)).toBe('imported_at')
  })

  it('give a row without an id the same id every time, and anonymous visitors their device as profile', () => {
    const record = { name: 'click', deviceId: 'dev', createdAt: '2026-04-01T10:00:00Z', properties: { y: '1', x: '2' } }
    const a = toEventRow(record, ctx)
    const b = toEventRow({ ...record, properties: { x: '2', y: '1' } }, { ...ctx, importedAt: '2030-01-01 00:00:00' })
    expect(a.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(b.id).toBe(a.id)
    expect(toEventRow({ ...record, name: 'other' }, ctx).id).not.toBe(a.id)
    expect(toEventRow(record, { ...ctx, projectId: 'q' }).id).not.toBe(a.id)
    expect(a.profile_id).toBe('dev')
  })

  it('read ClickHouse map text, big counts and imported_at', () => {
    const row = toEventRow(
      {
        name: 'n',
        created_at: '2026-04-01 10:00:00',
        properties: "{'it\\'s':'a\\\\b', 'k':''}",
        revenue: '18446744073709551615',
        imported_at: '2026-04-02 03:04:05',
      },
      ctx,
    )
    expect(row.properties).toEqual({ "it's": 'a\\b', k: '' })
    expect(row.revenue).toBe('18446744073709551615')
    expect(row.imported_at).toBe('2026-04-02 03:04:05')
  })

  it.each([
    [{ createdAt: '2026-04-01T10:00:00Z' }, /^name: required/],
    [{ name: 'n' }, /^created_at\/createdAt: required/],
    [{ name: 'n', createdAt: 'soon' }, /^created_at\/createdAt: expected an ISO 8601 date-time/],
    [{ name: 'n', createdAt: '1969-12-31T23:59:59Z' }, /from 1970 to 2299/],
    [{ name: 'n', createdAt: '2026-04-01', id: 'not-a-uuid' }, /^id: expected a UUID, got "not-a-uuid"/],
    [{ name: 'n', createdAt: '2026-04-01', duration: -1 }, /^duration: expected a whole number/],
    [{ name: 'n', createdAt: '2026-04-01', revenue: '18446744073709551616' }, /^revenue: expected a whole number/],
    [{ name: 'n', createdAt: '2026-04-01', latitude: 91 }, /^latitude: expected a number from -90 to 90/],
    [{ name: 'n', createdAt: '2026-04-01', properties: ['a'] }, /^properties: expected an object/],
    [{ name: 'n', createdAt: '2026-04-01', properties: 'a=b' }, /^properties: expected an object/],
    [{ name: 'n', createdAt: '2026-04-01', deviceId: { x: 1 } }, /^device_id\/deviceId: expected text/],
  ])('refuse %j', (record, message) => {
    expect(() => toEventRow(record, ctx)).toThrow(RowError)
    expect(() => toEventRow(record, ctx)).toThrow(message)
  })
})

describe('formats by name', () => {
  it.each([
    ['a.ndjson', 'ndjson'],
    ['a.JSONL', 'ndjson'],
    ['a.ndjson.gz', 'ndjson'],
    ['dir.csv/a.csv.gz', 'csv'],
    ['a.parquet', 'parquet'],
    ['a.pq', 'parquet'],
    ['a.json', undefined],
    ['a.parquet.gz', undefined],
  ])('%s', (file, format) => {
    expect(formatOf(file)).toBe(format)
  })
})
